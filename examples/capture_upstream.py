#!/usr/bin/env python3
"""A stand-in OpenAI Chat Completions upstream for scripts/examples.sh: it
appends each request body it receives to a file (one JSON text per line)
and answers with a fixed completion, so the script can check what a provider
receives from llmrelay when a client in another language sends a request.

    python3 capture_upstream.py PORT BODIES_FILE
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

ANSWER = {
    "id": "chatcmpl-examplesCapture0001",
    "object": "chat.completion",
    "created": 1763900000,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"reasoning\": \"6*7\", \"answer\": \"42\"}"},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42},
}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with open(sys.argv[2], "ab") as f:
            f.write(body.replace(b"\n", b" ") + b"\n")
        out = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.send_header("x-request-id", "req_examples_capture_0001")
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
