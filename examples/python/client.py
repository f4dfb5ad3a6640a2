#!/usr/bin/env python3
"""llmrelay from Python (grpcio): a Chat, a StreamTools printing its events as
they arrive, an Embed, an Agent run with one client tool, and the typed
details of an error. With LLMRELAY_ORDER_MODEL set it also sends a tool
schema whose key order matters to that model (scripts/examples.sh checks
what the provider received).

Generate the code first (scripts/examples.sh does):
    protoc -I proto --python_out=examples/python/gen --grpc_out=examples/python/gen \
        --plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin $(find proto -name '*.proto')
Then: LLMRELAY_ADDR=127.0.0.1:50051 python3 examples/python/client.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402
from google.rpc import error_details_pb2, status_pb2  # noqa: E402
from llmrelay.v1 import content_pb2, enums_pb2  # noqa: E402
from llmrelay.v1 import gateway_service_pb2 as gw  # noqa: E402
from llmrelay.v1 import gateway_service_pb2_grpc as gw_grpc  # noqa: E402


def user(text):
    return [content_pb2.Message(role=enums_pb2.ROLE_USER, parts=[content_pb2.Part(text=text)])]


def error_details(err):
    """The google.rpc.Status of a failed call, from the trailing metadata."""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            return status_pb2.Status.FromString(value)
    return None


def main():
    # host:port, or unix:///path/to.sock
    target = os.environ.get("LLMRELAY_ADDR", "127.0.0.1:50051")
    with grpc.insecure_channel(target) as channel:
        stub = gw_grpc.GatewayServiceStub(channel)

        resp = stub.Chat(gw.ChatRequest(model="builtin/echo", messages=user("hello")), timeout=30)
        print("chat:", resp.message.parts[0].text, "| tokens:", resp.meta.usage.total_tokens)

        # The tool's JSON Schema is plain JSON text.
        schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        tool = content_pb2.Tool(name="get_weather", description="the weather in a city", parameters=json.dumps(schema))
        req = gw.StreamToolsRequest(model="builtin/echo", messages=user("Paris"), tools=[tool])
        for ev in stub.StreamTools(req, timeout=30):
            kind = ev.WhichOneof("event")
            if kind == "tool_call_delta":
                print("event: tool_call_delta", ev.tool_call_delta.call_id, repr(ev.tool_call_delta.arguments_delta))
            elif kind == "tool_call_done":
                call = ev.tool_call_done.tool_call
                print("event: tool_call_done", call.name, call.arguments)
            elif kind == "end":
                print("event: end", enums_pb2.FinishReason.Name(ev.end.finish_reason))
            else:
                print("event:", kind)

        emb = stub.Embed(gw.EmbedRequest(model="builtin/embed", inputs=["a", "b"], dimensions=4), timeout=30)
        print("embed:", len(emb.embeddings), "x", len(emb.embeddings[0].values))

        agent(stub)

        order_model = os.environ.get("LLMRELAY_ORDER_MODEL")
        if order_model:
            # Keys in the order the model should fill them: a schema is
            # text, so the provider gets this order byte for byte.
            ordered = json.dumps({"type": "object", "properties": {
                "reasoning": {"type": "string"}, "answer": {"type": "string"}}, "required": ["reasoning", "answer"]})
            stub.Tools(gw.ToolsRequest(model=order_model, messages=user("6 times 7?"),
                                       tools=[content_pb2.Tool(name="reply", parameters=ordered)]), timeout=30)
            print("order: sent")

        try:
            stub.Chat(gw.ChatRequest(model="no-such-model", messages=user("hi")), timeout=30)
            sys.exit("error: the call to an unknown model succeeded")
        except grpc.RpcError as err:
            print("error:", err.code().name, err.details())
            status = error_details(err)
            if status is None:
                sys.exit("error: no status details")
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    print("  reason:", info.reason, info.domain, dict(info.metadata))
                elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad = error_details_pb2.BadRequest()
                    detail.Unpack(bad)
                    for v in bad.field_violations:
                        print("  field:", v.field, "-", v.description)


def agent(stub):
    """An Agent run: the server calls the model and asks this client for
    the results of its tool, keyed by call_id, until the model answers."""
    import queue

    outbox = queue.Queue()
    tool = content_pb2.Tool(name="get_weather", parameters=json.dumps(
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}))
    outbox.put(gw.AgentRequest(setup=gw.AgentSetup(model="builtin/echo", messages=user("Lyon"), tools=[tool], max_rounds=3)))

    def requests():
        while True:
            msg = outbox.get()
            if msg is None:
                return
            yield msg

    for ev in stub.Agent(requests(), timeout=30):
        kind = ev.WhichOneof("event")
        if kind == "tool_call_request":
            req = ev.tool_call_request
            args = json.loads(req.arguments)
            print("agent: tool", req.name, req.call_id, args)
            outbox.put(gw.AgentRequest(tool_result=content_pb2.ToolResult(
                call_id=req.call_id, content=json.dumps({"city": args["city"], "sky": "sunny"}))))
        elif kind == "end":
            last = ev.end.messages[-1]
            text = "".join(p.text for p in last.parts)
            print("agent: end", enums_pb2.FinishReason.Name(ev.end.finish_reason),
                  "model calls:", ev.end.meta.model_calls, "| answer:", text)
            outbox.put(None)


if __name__ == "__main__":
    main()
