# Generates the agent fixtures: hand-built, in the shape of the recorded
# streams under server/provider/*/testdata. Every id here is unique to these
# fixtures. Run: python3 gen.py
import json

def sse(events, named=True):
    out = []
    for ev in events:
        if named:
            out.append("event: %s\ndata: %s\n\n" % (ev["type"], json.dumps(ev, separators=(",", ":"))))
        else:
            out.append("data: %s\n\n" % json.dumps(ev, separators=(",", ":")))
    return "".join(out)

def write(name, head, body):
    with open(name, "w", newline="") as f:
        f.write(head + "\n" + body)

CALLS = [("get_weather", '{"city":"Lyon"}'), ("get_time", '{"city":"Lyon"}'), ("lookup_population", '{"city":"Lyon"}')]
FINAL = ["Lyon is sunny", " at 21°C, it is 14:05 there,", " and about 522,000 people live in the city."]

# --- OpenAI Chat Completions -------------------------------------------------
H = """HTTP/1.1 200 OK
Content-Type: text/event-stream; charset=utf-8
x-request-id: req_agt0c1a7e2f94b6d8c05e1f3a9b7d2c4e6
openai-processing-ms: 412
"""
ids = ["call_AgtC1wXq9LmR4tZp7NbV2yKs", "call_AgtC2hJd6FgT8uYe3MkQ5rWo", "call_AgtC3pLs1ZcX7vBn4QwE9tGh"]
cid = "chatcmpl-AgtRound1Qz8X4kV2nM7pL3wR9t"
def chunk(cid, delta, finish=None, usage=None):
    return {"id": cid, "object": "chat.completion.chunk", "created": 1763900000, "model": "gpt-4o-mini-2024-07-18",
            "choices": [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], "usage": usage}
evs = [chunk(cid, {"role": "assistant", "content": None})]
for i, (n, a) in enumerate(CALLS):
    evs.append(chunk(cid, {"tool_calls": [{"index": i, "id": ids[i], "type": "function", "function": {"name": n, "arguments": ""}}]}))
for i, (n, a) in enumerate(CALLS):
    evs.append(chunk(cid, {"tool_calls": [{"index": i, "function": {"arguments": a[:7]}}]}))
for i, (n, a) in enumerate(CALLS):
    evs.append(chunk(cid, {"tool_calls": [{"index": i, "function": {"arguments": a[7:]}}]}))
evs.append(chunk(cid, {}, "tool_calls"))
evs.append(chunk(cid, None, usage={"prompt_tokens": 140, "completion_tokens": 60, "total_tokens": 200, "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}}))
write("openai_round1.http", H, sse(evs, False) + "data: [DONE]\n\n")
cid = "chatcmpl-AgtRound2Hc5Y1mB8sD4fK6jN0q"
evs = [chunk(cid, {"role": "assistant", "content": ""})] + [chunk(cid, {"content": t}) for t in FINAL]
evs.append(chunk(cid, {}, "stop"))
evs.append(chunk(cid, None, usage={"prompt_tokens": 260, "completion_tokens": 25, "total_tokens": 285, "prompt_tokens_details": {"cached_tokens": 128}, "completion_tokens_details": {"reasoning_tokens": 0}}))
write("openai_round2.http", H.replace("req_agt0c1a7", "req_agt0c2b8"), sse(evs, False) + "data: [DONE]\n\n")

# --- OpenAI Responses ---------------------------------------------------------
H = """HTTP/1.1 200 OK
Content-Type: text/event-stream; charset=utf-8
x-request-id: req_agt1d3c5e7a9b1f2d4c6e8a0b2d4f6a8c0
"""
rid = "resp_agt0a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
rs = "rs_agt7f6e5d4c3b2a1908f7e6d5c4b3a2918f7e6d5c4b3a29"
enc = "gAAAAABpAgtEncRound1Xq2Lm9Rt4Vz7Kp1Yw8Nc3Hb6Js0Df5Gu2Ei9Ao4Bs7Ct1Dv3Ex5Fy8Gz0Ha2Ib4Jc6Kd"
fcs = ["fc_agt11aa22bb33cc44dd55ee66ff7788990011aa22bb33", "fc_agt22bb33cc44dd55ee66ff7788990011aa22bb33cc44", "fc_agt33cc44dd55ee66ff7788990011aa22bb33cc44dd55"]
rcalls = ["call_AgtR1nB7vC3xZ9qW5eT2yU8i", "call_AgtR2mK4jH6gF1dS8aP3oL7k", "call_AgtR3qZ5wX2cV9bN6mE1rT4y"]
def resp(rid, status, output, usage=None):
    return {"id": rid, "object": "response", "created_at": 1763900100, "status": status, "model": "o4-mini-2025-04-16",
            "output": output, "previous_response_id": None, "store": False, "usage": usage}
seq = [0]
def ev(t, **kw):
    d = {"type": t, "sequence_number": seq[0]}
    d.update(kw)
    seq[0] += 1
    return d
summary = "The user wants weather, time and population for Lyon; I will call all three tools."
evs = [ev("response.created", response=resp(rid, "in_progress", [])),
       ev("response.output_item.added", output_index=0, item={"id": rs, "type": "reasoning", "summary": []}),
       ev("response.reasoning_summary_part.added", item_id=rs, output_index=0, summary_index=0, part={"type": "summary_text", "text": ""}),
       ev("response.reasoning_summary_text.delta", item_id=rs, output_index=0, summary_index=0, delta=summary),
       ev("response.reasoning_summary_text.done", item_id=rs, output_index=0, summary_index=0, text=summary),
       ev("response.output_item.done", output_index=0, item={"id": rs, "type": "reasoning", "encrypted_content": enc, "summary": [{"type": "summary_text", "text": summary}]})]
output = [{"id": rs, "type": "reasoning", "encrypted_content": enc, "summary": [{"type": "summary_text", "text": summary}]}]
for i, (n, a) in enumerate(CALLS):
    evs.append(ev("response.output_item.added", output_index=i + 1, item={"id": fcs[i], "type": "function_call", "status": "in_progress", "arguments": "", "call_id": rcalls[i], "name": n}))
    evs.append(ev("response.function_call_arguments.delta", item_id=fcs[i], output_index=i + 1, delta=a[:9]))
    evs.append(ev("response.function_call_arguments.delta", item_id=fcs[i], output_index=i + 1, delta=a[9:]))
    evs.append(ev("response.function_call_arguments.done", item_id=fcs[i], output_index=i + 1, arguments=a))
    item = {"id": fcs[i], "type": "function_call", "status": "completed", "arguments": a, "call_id": rcalls[i], "name": n}
    evs.append(ev("response.output_item.done", output_index=i + 1, item=item))
    output.append(item)
evs.append(ev("response.completed", response=resp(rid, "completed", output, {"input_tokens": 150, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 90, "output_tokens_details": {"reasoning_tokens": 40}, "total_tokens": 240})))
write("responses_round1.http", H, sse(evs))
seq[0] = 0
rid = "resp_agt9f8e7d6c5b4a39281706f5e4d3c2b1a0fedcba98765"
msg = "msg_agt44dd55ee66ff7788990011aa22bb33cc44dd55ee66"
text = "".join(FINAL)
evs = [ev("response.created", response=resp(rid, "in_progress", [])),
       ev("response.output_item.added", output_index=0, item={"id": msg, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}),
       ev("response.content_part.added", item_id=msg, output_index=0, content_index=0, part={"type": "output_text", "annotations": [], "text": ""})]
for t in FINAL:
    evs.append(ev("response.output_text.delta", item_id=msg, output_index=0, content_index=0, delta=t))
item = {"id": msg, "type": "message", "status": "completed", "content": [{"type": "output_text", "annotations": [], "text": text}], "role": "assistant"}
evs += [ev("response.output_text.done", item_id=msg, output_index=0, content_index=0, text=text),
        ev("response.output_item.done", output_index=0, item=item),
        ev("response.completed", response=resp(rid, "completed", [item], {"input_tokens": 300, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 330}))]
write("responses_round2.http", H.replace("req_agt1d3c5", "req_agt1e4d6"), sse(evs))

# --- Anthropic ---------------------------------------------------------------
H = """HTTP/1.1 200 OK
Content-Type: text/event-stream; charset=utf-8
request-id: req_011AgtRound1Vb7Nx2Kq9Lm4Ts
"""
sig = "EqQDCkYIBxgCKkAgtSigRound1Lq8Xv3Nc6Bz1Km5Wt9Yp2Hr4Jd7Fs0Ge3Ua6Ib9Oc2Pd5Qe8Rf1Sg4Th7Ui0Vj3Wk6Xl"
tids = ["toolu_01AgtW3xK9pL2mN7qR4sT8vY", "toolu_01AgtT5yH1jG6fD3sA9zX2cV", "toolu_01AgtP8oI4uY7tR2eW5qA1sD"]
think = "Three lookups for Lyon: weather, time, population. I can run them in parallel."
evs = [{"type": "message_start", "message": {"model": "claude-sonnet-4-5-20250929", "id": "msg_01AgtRound1Mz4Qw8Ex2Rc6Tv", "type": "message", "role": "assistant", "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 520, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 3}}},
       {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
       {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": think}},
       {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": sig}},
       {"type": "content_block_stop", "index": 0}]
for i, (n, a) in enumerate(CALLS):
    evs += [{"type": "content_block_start", "index": i + 1, "content_block": {"type": "tool_use", "id": tids[i], "name": n, "input": {}}},
            {"type": "content_block_delta", "index": i + 1, "delta": {"type": "input_json_delta", "partial_json": a[:6]}},
            {"type": "content_block_delta", "index": i + 1, "delta": {"type": "input_json_delta", "partial_json": a[6:]}},
            {"type": "content_block_stop", "index": i + 1}]
evs += [{"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 160}}, {"type": "message_stop"}]
write("anthropic_round1.http", H, sse(evs))
evs = [{"type": "message_start", "message": {"model": "claude-sonnet-4-5-20250929", "id": "msg_01AgtRound2Pk7Lj3Hg9Fd5Sa", "type": "message", "role": "assistant", "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 800, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 512, "output_tokens": 2}}},
       {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
evs += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}} for t in FINAL]
evs += [{"type": "content_block_stop", "index": 0}, {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 28}}, {"type": "message_stop"}]
write("anthropic_round2.http", H.replace("Round1Vb7", "Round2Cx5"), sse(evs))

# --- Gemini ------------------------------------------------------------------
H = """HTTP/1.1 200 OK
Content-Type: text/event-stream
"""
tsig = "CtwBAgtThoughtSig0Yq3Wm8Rn2Bv6Xc1Lk5Hj9Gf4Ds7Ap0Oi3Uy6Tr9Ee2Ww5Qq8"
parts = []
for i, (n, a) in enumerate(CALLS):
    p = {"functionCall": {"name": n, "args": json.loads(a)}}
    if i == 0:
        p["thoughtSignature"] = tsig
    parts.append(p)
evs = [{"candidates": [{"content": {"parts": parts[:2], "role": "model"}, "index": 0}], "usageMetadata": {"promptTokenCount": 90, "candidatesTokenCount": 20, "totalTokenCount": 140, "thoughtsTokenCount": 30}, "modelVersion": "gemini-2.5-flash", "responseId": "AgtGem1Rnd-Xq7Lm2Vz9"},
       {"candidates": [{"content": {"parts": parts[2:], "role": "model"}, "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 90, "candidatesTokenCount": 30, "totalTokenCount": 150, "thoughtsTokenCount": 30}, "modelVersion": "gemini-2.5-flash", "responseId": "AgtGem1Rnd-Xq7Lm2Vz9"}]
write("gemini_round1.http", H, sse(evs, False))
evs = [{"candidates": [{"content": {"parts": [{"text": t}], "role": "model"}, "index": 0}], "modelVersion": "gemini-2.5-flash", "responseId": "AgtGem2Rnd-Pb4Kc8Ns1"} for t in FINAL]
evs[-1]["candidates"][0]["finishReason"] = "STOP"
evs[-1]["usageMetadata"] = {"promptTokenCount": 200, "candidatesTokenCount": 26, "totalTokenCount": 226}
write("gemini_round2.http", H, sse(evs, False))

# --- Ollama ------------------------------------------------------------------
H = """HTTP/1.1 200 OK
Content-Type: application/x-ndjson
"""
lines = [{"model": "qwen3:8b", "created_at": "2025-11-23T10:00:0%d.10000%dZ" % (i, i), "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"index": i, "name": n, "arguments": json.loads(a)}}]}, "done": False} for i, (n, a) in enumerate(CALLS)]
lines.append({"model": "qwen3:8b", "created_at": "2025-11-23T10:00:03.5Z", "message": {"role": "assistant", "content": ""}, "done_reason": "stop", "done": True, "total_duration": 1811457125, "prompt_eval_count": 230, "eval_count": 61})
write("ollama_round1.http", H, "".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))
lines = [{"model": "qwen3:8b", "created_at": "2025-11-23T10:00:1%d.2Z" % i, "message": {"role": "assistant", "content": t}, "done": False} for i, t in enumerate(FINAL)]
lines.append({"model": "qwen3:8b", "created_at": "2025-11-23T10:00:14.9Z", "message": {"role": "assistant", "content": ""}, "done_reason": "stop", "done": True, "total_duration": 911457125, "prompt_eval_count": 330, "eval_count": 27})
write("ollama_round2.http", H, "".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines))
