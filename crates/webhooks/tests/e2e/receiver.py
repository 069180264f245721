"""A webhook receiver on loopback, as a client of the service would run one.

Every request is verified with the Standard Webhooks reference implementation (the
`standardwebhooks` package); the first REFUSALS attempts of each message (by `webhook-id`) are
answered 503, later ones 200; a message taken before is answered 200 again and counted as a
duplicate, as a receiver that dedups by id would. Each request is appended to LOG as one JSON
line: {"id", "verified", "error", "answered", "duplicate", "body"}.

Usage: receiver.py PORT_FILE LOG SECRET REFUSALS
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

PORT_FILE, LOG, SECRET, REFUSALS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
webhook = Webhook(SECRET)
lock = threading.Lock()
attempts = {}
taken = set()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            webhook.verify(body, headers)
            verified, error = True, None
        except WebhookVerificationError as e:
            verified, error = False, str(e)
        msg_id = headers.get("webhook-id", "")
        with lock:
            attempts[msg_id] = attempts.get(msg_id, 0) + 1
            duplicate = msg_id in taken
            answered = 200 if (verified and attempts[msg_id] > REFUSALS) or duplicate else 503
            if answered == 200:
                taken.add(msg_id)
            with open(LOG, "a") as log:
                record = {
                    "id": msg_id,
                    "verified": verified,
                    "error": error,
                    "answered": answered,
                    "duplicate": duplicate,
                    "body": json.loads(body or b"null"),
                }
                log.write(json.dumps(record) + "\n")
        self.send_response(answered)
        self.end_headers()
        self.wfile.write(b"ok" if answered == 200 else b"try later")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
