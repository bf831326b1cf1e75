#!/usr/bin/python3
"""PyTorch peer for `clawrl bench engine`: the same Llama-architecture workloads, measured in torch.

Reads JSON on stdin:
  {"configs": [{"name", "vocab", "hidden", "layers", "heads", "kvHeads", "ffn", "tied"}],
   "threads", "seqLen", "promptLen", "newTokens", "steps"?, "clock"?}
Prints one JSON line:
  {"configs": [{"name", "trainTokPerS", "scoreTokPerS", "sampleTokPerS": {"b1", "b8"}, "peakRssMiB"}]}

Each config runs in a fresh child process, so that peakRssMiB is that config's own peak. Weights
are random (std 0.02). Training is LoRA r16/alpha 32 on q,k,v,o with a clipped-PPO token loss and
Adam, T=seqLen, B=1; scoring is forward log-probs at T=seqLen; sampling uses a KV cache at
temperature 1 (tok/s = B * newTokens / wall time, prefill included). PyTorch is never a runtime
dependency of clawrl; this script only gives the benchmark a same-machine reference.
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def measure(spec):
    import torch

    torch.set_num_threads(spec["threads"])
    torch.manual_seed(0)
    config = spec["config"]
    vocab, width, heads, kv_heads = config["vocab"], config["hidden"], config["heads"], config["kvHeads"]
    head_width = width // heads
    group = heads // kv_heads
    seq_len, prompt_len, new_tokens = spec["seqLen"], spec["promptLen"], spec["newTokens"]
    steps = spec.get("steps", 3)

    def weight(*shape):
        return torch.randn(*shape) * 0.02

    class Projection(torch.nn.Module):
        """x @ W (W frozen, [in, out]) plus an optional LoRA term x @ A @ B * alpha / rank."""

        def __init__(self, inputs, outputs, rank=0, alpha=32):
            super().__init__()
            self.register_buffer("w", weight(inputs, outputs))
            self.rank = rank
            if rank:
                self.a = torch.nn.Parameter(torch.randn(inputs, rank) * 0.01)
                self.b = torch.nn.Parameter(torch.zeros(rank, outputs))
                self.scale = alpha / rank

        def forward(self, x):
            y = x @ self.w
            return y + (x @ self.a) @ self.b * self.scale if self.rank else y

    def rms_norm(x, w, eps=1e-6):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def rotate_half(x):
        first, second = x.chunk(2, dim=-1)
        return torch.cat((-second, first), dim=-1)

    inverse_frequencies = 1.0 / (10000 ** (torch.arange(0, head_width, 2).float() / head_width))

    def rope(x, offset):
        positions = torch.arange(offset, offset + x.shape[-2]).float()
        angles = torch.outer(positions, inverse_frequencies)
        angles = torch.cat((angles, angles), dim=-1)
        return x * angles.cos() + rotate_half(x) * angles.sin()

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q = Projection(width, heads * head_width, 16)
            self.k = Projection(width, kv_heads * head_width, 16)
            self.v = Projection(width, kv_heads * head_width, 16)
            self.o = Projection(heads * head_width, width, 16)
            self.gate, self.up = Projection(width, config["ffn"]), Projection(width, config["ffn"])
            self.down = Projection(config["ffn"], width)
            self.register_buffer("attention_norm", torch.ones(width))
            self.register_buffer("mlp_norm", torch.ones(width))

        def forward(self, x, cache, offset):
            batch, length, _ = x.shape
            h = rms_norm(x, self.attention_norm)
            q = rope(self.q(h).view(batch, length, heads, head_width).transpose(1, 2), offset)
            k = rope(self.k(h).view(batch, length, kv_heads, head_width).transpose(1, 2), offset)
            v = self.v(h).view(batch, length, kv_heads, head_width).transpose(1, 2)
            if cache is not None:
                if cache[0] is not None:
                    k, v = torch.cat((cache[0], k), 2), torch.cat((cache[1], v), 2)
                cache[0], cache[1] = k, v
            # GQA without repeating K/V: queries are grouped per KV head.
            q = q.reshape(batch, kv_heads, group * length, head_width)
            scores = (q @ k.transpose(-1, -2)) / head_width**0.5
            total = k.shape[2]
            query_positions = torch.arange(offset, offset + length).repeat(group)
            mask = torch.arange(total)[None, :] > query_positions[:, None]
            scores = scores.masked_fill(mask, float("-inf"))
            attended = (scores.softmax(-1) @ v).view(batch, heads, length, head_width)
            x = x + self.o(attended.transpose(1, 2).reshape(batch, length, heads * head_width))
            h = rms_norm(x, self.mlp_norm)
            return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("embedding", weight(vocab, width))
            self.register_buffer("lm_head", self.embedding if config["tied"] else weight(vocab, width))
            self.layers = torch.nn.ModuleList(Layer() for _ in range(config["layers"]))
            self.register_buffer("final_norm", torch.ones(width))

        def forward(self, tokens, caches=None, offset=0):
            x = self.embedding[tokens]
            for index, layer in enumerate(self.layers):
                x = layer(x, None if caches is None else caches[index], offset)
            return rms_norm(x, self.final_norm) @ self.lm_head.T

    model = Model()
    tokens = torch.randint(0, vocab, (1, seq_len))

    def token_logprobs(logits, targets):
        return logits.log_softmax(-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)

    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    loss_mask = (torch.arange(seq_len - 1) >= prompt_len - 1).float()
    advantages = torch.where(torch.rand(seq_len - 1) < 0.5, -1.0, 1.0)

    def train_step():
        logprobs = token_logprobs(model(tokens[:, :-1]), tokens[:, 1:])[0]
        ratio = torch.exp(logprobs - logprobs.detach())
        surrogate = torch.minimum(ratio * advantages, ratio.clamp(0.8, 1.28) * advantages)
        loss = -(surrogate * loss_mask).sum() / loss_mask.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def score():
        with torch.no_grad():
            token_logprobs(model(tokens[:, :-1]), tokens[:, 1:])

    def sample(batch, count):
        with torch.no_grad():
            caches = [[None, None] for _ in model.layers]
            logits = model(torch.randint(0, vocab, (batch, prompt_len)), caches)[:, -1]
            for step in range(count):
                logprobs = logits.log_softmax(-1)
                chosen = torch.multinomial(logprobs.exp(), 1)
                logprobs.gather(-1, chosen)
                if step + 1 < count:
                    logits = model(chosen, caches, prompt_len + step)[:, -1]

    # "clock": "process" (scripts/engine-cpu): the fastest step in process CPU time, which a shared
    # machine measures faithfully at one thread; the default is the median step in wall time.
    process_clock = spec.get("clock") == "process"
    clock = time.process_time if process_clock else time.perf_counter

    def seconds(action, repeats):
        action()  # warm-up
        durations = []
        for _ in range(repeats):
            start = clock()
            action()
            durations.append(clock() - start)
        return min(durations) if process_clock else statistics.median(durations)

    train = seconds(train_step, steps)
    scoring = seconds(score, steps)
    sample_rates = {}
    for name, batch in (("b1", 1), ("b8", 8)):
        sample(batch, min(4, new_tokens))  # warm-up
        start = time.perf_counter()
        sample(batch, new_tokens)
        sample_rates[name] = batch * new_tokens / (time.perf_counter() - start)
    return {
        "name": config["name"],
        "trainTokPerS": seq_len / train,
        "scoreTokPerS": seq_len / scoring,
        "sampleTokPerS": sample_rates,
        "peakRssMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--single":
        print(json.dumps(measure(json.load(sys.stdin))))
        return
    request = json.load(sys.stdin)
    threads = int(request.get("threads", 1))
    environment = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    results = []
    for config in request["configs"]:
        spec = {key: request[key] for key in ("seqLen", "promptLen", "newTokens") if key in request}
        spec.update(config=config, threads=threads, steps=int(request.get("steps", 3)), clock=request.get("clock", "wall"))
        child = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--single"],
            input=json.dumps(spec), capture_output=True, text=True, env=environment, check=False,
        )
        if child.returncode != 0:
            sys.stderr.write(child.stderr)
            sys.exit(f"engine_peer: config {config['name']} failed (exit {child.returncode})")
        results.append(json.loads(child.stdout.strip().splitlines()[-1]))
    print(json.dumps({"configs": results}))


if __name__ == "__main__":
    main()
