#!/usr/bin/python3
"""Builds the golden fixtures for src/model: tiny random-weight Llama, Qwen2 and Qwen3 models in
Hugging Face format, with per-token log-probs, LoRA gradients and full-parameter gradients computed
by PyTorch in float64.

transformers is not installed here, so the modules are written out by hand, following the
semantics of transformers' modeling_llama.py / modeling_qwen2.py / modeling_qwen3.py:
rotate_half RoPE (with llama3 rope_scaling), repeat_kv grouping (kv head j serves query heads
j*G .. j*G+G-1), q/k/v bias only in Qwen2, per-head q_norm/k_norm before RoPE in Qwen3,
SwiGLU MLP, RMSNorm with the weight applied after normalisation, PEFT LoRA as
base(x) + lora_B(lora_A(x)) * alpha / r.

Run from the repository root:  /usr/bin/python3 scripts/golden/make-golden-fixtures.py
A dev tool only; nothing at runtime depends on Python.
"""
import json
import math
import os
import struct

import torch

OUT = os.path.join(os.path.dirname(__file__), '..', '..', 'src', 'model', '__fixtures__', 'golden')
torch.set_default_dtype(torch.float64)

BASE = dict(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
            rms_norm_eps=1e-6, hidden_act='silu', bos_token_id=1, eos_token_id=2, torch_dtype='float32')

FAMILIES = {
    'llama': dict(architectures=['LlamaForCausalLM'], model_type='llama', rope_theta=10000.0,
                  rope_scaling={'rope_type': 'llama3', 'factor': 4.0, 'low_freq_factor': 1.0,
                                'high_freq_factor': 4.0, 'original_max_position_embeddings': 16},
                  attention_bias=False, mlp_bias=False, tie_word_embeddings=False),
    'qwen2': dict(architectures=['Qwen2ForCausalLM'], model_type='qwen2', rope_theta=1000000.0,
                  rope_scaling=None, use_sliding_window=False, sliding_window=None, max_window_layers=2,
                  tie_word_embeddings=True),
    'qwen3': dict(architectures=['Qwen3ForCausalLM'], model_type='qwen3', rope_theta=1000000.0,
                  rope_scaling=None, head_dim=16, attention_bias=False, tie_word_embeddings=True),
}

LORA_TARGETS = {
    'llama': ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    'qwen2': ['q_proj', 'k_proj', 'v_proj', 'o_proj'],
    'qwen3': ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
}
LORA_RANK = 4
LORA_ALPHA = 8
SEQUENCE_LENGTH = 14
RESPONSE_START = 6
TEMPERATURE = 0.7


def head_dim(config):
    return config.get('head_dim') or config['hidden_size'] // config['num_attention_heads']


def module_shapes(config):
    hidden, ffn, hd = config['hidden_size'], config['intermediate_size'], head_dim(config)
    heads, kv_heads = config['num_attention_heads'], config['num_key_value_heads']
    return {'q_proj': (heads * hd, hidden), 'k_proj': (kv_heads * hd, hidden), 'v_proj': (kv_heads * hd, hidden),
            'o_proj': (hidden, heads * hd), 'gate_proj': (ffn, hidden), 'up_proj': (ffn, hidden),
            'down_proj': (hidden, ffn)}


def module_prefix(name):
    return 'mlp' if name in ('gate_proj', 'up_proj', 'down_proj') else 'self_attn'


def make_weights(config, family, generator):
    def normal(*shape, std=0.15):
        return (torch.randn(*shape, generator=generator) * std)

    def norm_weight(size):
        return 1.0 + normal(size, std=0.1)

    weights = {'model.embed_tokens.weight': normal(config['vocab_size'], config['hidden_size'], std=0.25)}
    for layer in range(config['num_hidden_layers']):
        prefix = f'model.layers.{layer}'
        weights[f'{prefix}.input_layernorm.weight'] = norm_weight(config['hidden_size'])
        weights[f'{prefix}.post_attention_layernorm.weight'] = norm_weight(config['hidden_size'])
        for name, shape in module_shapes(config).items():
            weights[f'{prefix}.{module_prefix(name)}.{name}.weight'] = normal(*shape, std=0.15)
        if family == 'qwen2':
            for name in ('q_proj', 'k_proj', 'v_proj'):
                weights[f'{prefix}.self_attn.{name}.bias'] = normal(module_shapes(config)[name][0], std=0.1)
        if family == 'qwen3':
            weights[f'{prefix}.self_attn.q_norm.weight'] = norm_weight(head_dim(config))
            weights[f'{prefix}.self_attn.k_norm.weight'] = norm_weight(head_dim(config))
    weights['model.norm.weight'] = norm_weight(config['hidden_size'])
    if not config['tie_word_embeddings']:
        weights['lm_head.weight'] = normal(config['vocab_size'], config['hidden_size'], std=0.25)
    return weights


def inverse_frequencies(config):
    hd = head_dim(config)
    inv_freq = 1.0 / (config['rope_theta'] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    scaling = config.get('rope_scaling')
    if scaling and (scaling.get('rope_type') or scaling.get('type')) == 'llama3':
        factor, low, high = scaling['factor'], scaling['low_freq_factor'], scaling['high_freq_factor']
        old_context = scaling['original_max_position_embeddings']
        low_freq_wavelen, high_freq_wavelen = old_context / low, old_context / high
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_context / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
        inv_freq = torch.where(is_medium, smoothed, scaled)
    return inv_freq


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rms_norm(x, weight, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def linear(weights, lora, x, name, scale):
    out = x @ weights[name + '.weight'].T
    if name + '.bias' in weights:
        out = out + weights[name + '.bias']
    if lora is not None and name in lora:
        a, b = lora[name]
        out = out + (x @ a.T) @ b.T * scale
    return out


def forward_logits(config, weights, token_ids, lora=None, scale=0.0):
    heads, kv_heads, hd = config['num_attention_heads'], config['num_key_value_heads'], head_dim(config)
    eps, length = config['rms_norm_eps'], len(token_ids)
    group = heads // kv_heads
    positions = torch.arange(length, dtype=torch.float64)
    freqs = positions[:, None] * inverse_frequencies(config)[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    causal = torch.full((length, length), float('-inf')).triu(1)
    x = weights['model.embed_tokens.weight'][torch.tensor(token_ids)]
    for layer in range(config['num_hidden_layers']):
        prefix = f'model.layers.{layer}'
        h = rms_norm(x, weights[f'{prefix}.input_layernorm.weight'], eps)
        q = linear(weights, lora, h, f'{prefix}.self_attn.q_proj', scale).view(length, heads, hd)
        k = linear(weights, lora, h, f'{prefix}.self_attn.k_proj', scale).view(length, kv_heads, hd)
        v = linear(weights, lora, h, f'{prefix}.self_attn.v_proj', scale).view(length, kv_heads, hd)
        if f'{prefix}.self_attn.q_norm.weight' in weights:
            q = rms_norm(q, weights[f'{prefix}.self_attn.q_norm.weight'], eps)
            k = rms_norm(k, weights[f'{prefix}.self_attn.k_norm.weight'], eps)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.einsum('thd,shd->hts', q, k) / math.sqrt(hd) + causal
        attention = torch.einsum('hts,shd->thd', scores.softmax(-1), v).reshape(length, heads * hd)
        x = x + linear(weights, lora, attention, f'{prefix}.self_attn.o_proj', scale)
        h = rms_norm(x, weights[f'{prefix}.post_attention_layernorm.weight'], eps)
        gate = torch.nn.functional.silu(linear(weights, lora, h, f'{prefix}.mlp.gate_proj', scale))
        up = linear(weights, lora, h, f'{prefix}.mlp.up_proj', scale)
        x = x + linear(weights, lora, gate * up, f'{prefix}.mlp.down_proj', scale)
    x = rms_norm(x, weights['model.norm.weight'], eps)
    head = weights.get('lm_head.weight', weights['model.embed_tokens.weight'])
    return x @ head.T


def token_logprobs(logits, token_ids, temperature=1.0):
    logprobs = (logits[:-1] / temperature).log_softmax(-1)
    return logprobs.gather(1, torch.tensor(token_ids[1:])[:, None])[:, 0]


def save_safetensors(path, tensors, dtype='F32'):
    header, chunks, offset = {'__metadata__': {'format': 'pt'}}, [], 0
    for name, tensor in tensors.items():
        tensor = tensor.detach().contiguous()
        if dtype == 'F32':
            data = tensor.to(torch.float32).numpy().tobytes()
        else:
            data = tensor.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
        header[name] = {'dtype': dtype, 'shape': list(tensor.shape), 'data_offsets': [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header_bytes = json.dumps(header).encode()
    header_bytes += b' ' * (-len(header_bytes) % 8)
    with open(path, 'wb') as file:
        file.write(struct.pack('<Q', len(header_bytes)) + header_bytes + b''.join(chunks))


def write_json(path, value):
    with open(path, 'w') as file:
        json.dump(value, file, indent=1)
        file.write('\n')


def stored_precision(weights, dtype):
    """The values as the engine will read them back: rounded to the stored dtype, then float64."""
    storage = torch.float32 if dtype == 'F32' else torch.bfloat16
    return {name: tensor.to(storage).to(torch.float64) for name, tensor in weights.items()}


def build(name, family, seed, dtype='F32', shards=1):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    generator = torch.Generator().manual_seed(seed)
    config = {**BASE, **FAMILIES[family]}
    weights = stored_precision(make_weights(config, family, generator), dtype)
    write_json(os.path.join(folder, 'config.json'), config)
    names = list(weights)
    if shards == 1:
        save_safetensors(os.path.join(folder, 'model.safetensors'), weights, dtype)
    else:
        weight_map, per_shard = {}, math.ceil(len(names) / shards)
        for shard in range(shards):
            file_name = f'model-{shard + 1:05d}-of-{shards:05d}.safetensors'
            part = {n: weights[n] for n in names[shard * per_shard:(shard + 1) * per_shard]}
            save_safetensors(os.path.join(folder, file_name), part, dtype)
            weight_map.update({n: file_name for n in part})
        total = sum(t.numel() * 4 for t in weights.values())
        write_json(os.path.join(folder, 'model.safetensors.index.json'),
                   {'metadata': {'total_size': total}, 'weight_map': weight_map})

    token_ids = torch.randint(0, config['vocab_size'], (SEQUENCE_LENGTH,), generator=generator).tolist()
    advantages = (torch.rand(SEQUENCE_LENGTH - RESPONSE_START, generator=generator) * 2 - 1).tolist()
    with torch.no_grad():
        logits = forward_logits(config, weights, token_ids)
        logprobs = token_logprobs(logits, token_ids)
        tempered = token_logprobs(logits, token_ids, TEMPERATURE)

    # LoRA: fixed nonzero A and B, so the gradients of both factors are informative.
    scale = LORA_ALPHA / LORA_RANK
    lora, adapter_tensors = {}, {}
    for layer in range(config['num_hidden_layers']):
        for module in LORA_TARGETS[family]:
            out_features, in_features = module_shapes(config)[module]
            path = f'model.layers.{layer}.{module_prefix(module)}.{module}'
            a = (torch.randn(LORA_RANK, in_features, generator=generator) * 0.2).to(torch.float32).to(torch.float64)
            b = (torch.randn(out_features, LORA_RANK, generator=generator) * 0.2).to(torch.float32).to(torch.float64)
            a.requires_grad_(True)
            b.requires_grad_(True)
            lora[path] = (a, b)
            adapter_tensors[f'base_model.model.{path}.lora_A.weight'] = a
            adapter_tensors[f'base_model.model.{path}.lora_B.weight'] = b
    lora_logprobs = token_logprobs(forward_logits(config, weights, token_ids, lora, scale), token_ids)
    advantage_tensor = torch.tensor(advantages)
    lora_loss = -(lora_logprobs[RESPONSE_START - 1:] * advantage_tensor).sum()
    lora_loss.backward()
    lora_gradients = {}
    for path, (a, b) in lora.items():
        lora_gradients[f'base_model.model.{path}.lora_A.weight'] = a.grad
        lora_gradients[f'base_model.model.{path}.lora_B.weight'] = b.grad
    adapter_folder = os.path.join(folder, 'adapter')
    os.makedirs(adapter_folder, exist_ok=True)
    save_safetensors(os.path.join(adapter_folder, 'adapter_model.safetensors'), adapter_tensors)
    write_json(os.path.join(adapter_folder, 'adapter_config.json'), {
        'peft_type': 'LORA', 'task_type': 'CAUSAL_LM', 'base_model_name_or_path': name, 'r': LORA_RANK,
        'lora_alpha': LORA_ALPHA, 'lora_dropout': 0.0, 'bias': 'none', 'fan_in_fan_out': False,
        'target_modules': LORA_TARGETS[family], 'modules_to_save': None, 'use_rslora': False, 'use_dora': False})
    save_safetensors(os.path.join(folder, 'lora-gradients.safetensors'), lora_gradients)

    # Full fine-tuning: gradients of the same loss with respect to every base weight, no LoRA.
    trainable = {n: t.clone().requires_grad_(True) for n, t in weights.items()}
    full_logprobs = token_logprobs(forward_logits(config, trainable, token_ids), token_ids)
    full_loss = -(full_logprobs[RESPONSE_START - 1:] * advantage_tensor).sum()
    full_loss.backward()
    save_safetensors(os.path.join(folder, 'full-gradients.safetensors'), {n: t.grad for n, t in trainable.items()})

    write_json(os.path.join(folder, 'golden.json'), {
        'family': family, 'tokenIds': token_ids, 'responseStart': RESPONSE_START,
        'logprobs': logprobs.tolist(), 'temperature': TEMPERATURE, 'temperatureLogprobs': tempered.tolist(),
        'advantages': advantages, 'lora': {'rank': LORA_RANK, 'alpha': LORA_ALPHA,
                                           'logprobs': lora_logprobs.tolist(), 'loss': lora_loss.item()},
        'fullLoss': full_loss.item()})


if __name__ == '__main__':
    build('llama', 'llama', seed=1)
    build('qwen2', 'qwen2', seed=2)
    build('qwen3', 'qwen3', seed=3)
    build('llama-bf16', 'llama', seed=4, dtype='BF16')
    build('qwen2-sharded', 'qwen2', seed=5, shards=2)
