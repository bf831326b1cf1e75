// Rebuilds the tiny tokenizer fixtures in this folder: `node src/model/__fixtures__/build-fixtures.mjs`.
// The vocabularies are trained here (a few hundred byte-level BPE merges on a small corpus) so the
// tests exercise real multi-byte merges, half-character tokens and added tokens without shipping a
// 7 MB hub tokenizer. Output is deterministic; the tests rely on no particular id except those
// they look up by token text.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function bytesToUnicode() {
  const bytes = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const characters = bytes.map((b) => String.fromCodePoint(b));
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      characters.push(String.fromCodePoint(256 + extra));
      extra++;
    }
  }
  return { bytes, characters };
}

const qwenPattern =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const llamaPattern =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

function toJsRegex(pattern) {
  return new RegExp(pattern.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)", "'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]"), 'gu');
}

const corpus = [
  'You are a helpful assistant. You help students solve arithmetic word problems.',
  'The answer is 42. Hello world! Hello there, how are you today? I am fine, thank you.',
  'Let me check the weather for you. The weather in Paris is sunny and the temperature is 21 degrees.',
  '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>',
  '<tool_response>\n{"temperature": 21, "condition": "sunny"}\n</tool_response>',
  '# Tools\n\nYou may call one or more functions to assist with the user query.',
  'You are provided with function signatures within <tools></tools> XML tags:',
  '{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}',
  'For each function call, return a json object with function name and arguments within XML tags.',
  'system user assistant tool system user assistant',
  'Grade the solution: the student added the numbers correctly, so the grade is full marks.',
  '你好，世界！我们今天学习数学。你好吗？我很好，谢谢。',
  'Emoji make people happy 😀😀 😃 🎉🎉 👍 — naïve café déjà vu.',
].join('\n');

function train(pattern, mergeCount) {
  const { bytes, characters } = bytesToUnicode();
  const byteCharacter = new Map(bytes.map((b, i) => [b, characters[i]]));
  const encoder = new TextEncoder();
  const wordCounts = new Map();
  for (const match of corpus.matchAll(toJsRegex(pattern))) {
    const mapped = [...encoder.encode(match[0])].map((b) => byteCharacter.get(b)).join('');
    wordCounts.set(mapped, (wordCounts.get(mapped) ?? 0) + 1);
  }
  const words = [...wordCounts].map(([word, count]) => ({ symbols: [...word], count }));
  const vocab = {};
  characters.forEach((character, index) => (vocab[character] = index));
  const merges = [];
  for (let step = 0; step < mergeCount; step++) {
    const pairCounts = new Map();
    for (const { symbols, count } of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = `${symbols[i]} ${symbols[i + 1]}`;
        pairCounts.set(key, (pairCounts.get(key) ?? 0) + count);
      }
    }
    let best;
    for (const [key, count] of pairCounts) {
      if (best === undefined || count > best[1] || (count === best[1] && key < best[0])) best = [key, count];
    }
    if (best === undefined) break;
    const [left, right] = best[0].split(' ');
    merges.push([left, right]);
    vocab[left + right] = Object.keys(vocab).length;
    for (const word of words) {
      const merged = [];
      for (let i = 0; i < word.symbols.length; i++) {
        if (i + 1 < word.symbols.length && word.symbols[i] === left && word.symbols[i + 1] === right) {
          merged.push(left + right);
          i++;
        } else merged.push(word.symbols[i]);
      }
      word.symbols = merged;
    }
  }
  return { vocab, merges };
}

function addedToken(id, content, special) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special };
}

function writeJson(folder, name, value) {
  mkdirSync(join(here, folder), { recursive: true });
  writeFileSync(join(here, folder, name), JSON.stringify(value, null, 2) + '\n');
}

// Qwen 2.5 Instruct's published chat template, verbatim.
const qwen25Template = String.raw`{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
`;

// Llama 3 Instruct's published chat template, verbatim (the line break inside is part of it).
const llama3Template = String.raw`{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>

'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>

' }}{% endif %}`;

function addedTokensDecoder(added) {
  return Object.fromEntries(
    added.map(({ id, content, lstrip, normalized, rstrip, single_word, special }) => [
      String(id),
      { content, lstrip, normalized, rstrip, single_word, special },
    ]),
  );
}

function byteLevel() {
  return { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
}

// Qwen2.5-style: ChatML specials, `<tool_call>` tags as non-special added tokens, NFC normalizer.
{
  const { vocab, merges } = train(qwenPattern, 320);
  const base = Object.keys(vocab).length;
  const added = [
    addedToken(base, '<|endoftext|>', true),
    addedToken(base + 1, '<|im_start|>', true),
    addedToken(base + 2, '<|im_end|>', true),
    addedToken(base + 3, '<tool_call>', false),
    addedToken(base + 4, '</tool_call>', false),
  ];
  writeJson('chatml-model', 'tokenizer.json', {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: qwenPattern }, behavior: 'Isolated', invert: false },
        byteLevel(),
      ],
    },
    post_processor: byteLevel(),
    decoder: byteLevel(),
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  });
  const id = Object.fromEntries(added.map((token) => [token.content, token.id]));
  writeJson('chatml-model', 'tokenizer_config.json', {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: addedTokensDecoder(added),
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: null,
    chat_template: qwen25Template,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: 32768,
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  });
  writeJson('chatml-model', 'config.json', {
    architectures: ['Qwen2ForCausalLM'],
    bos_token_id: id['<|endoftext|>'],
    eos_token_id: id['<|im_end|>'],
    hidden_act: 'silu',
    hidden_size: 64,
    intermediate_size: 128,
    max_position_embeddings: 512,
    model_type: 'qwen2',
    num_attention_heads: 4,
    num_hidden_layers: 2,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000.0,
    tie_word_embeddings: true,
    torch_dtype: 'float32',
    // Padded to a multiple of 64, as Qwen pads its embedding beyond the tokenizer's ids.
    vocab_size: Math.ceil((base + added.length) / 64) * 64,
  });
  writeJson('chatml-model', 'generation_config.json', {
    bos_token_id: id['<|endoftext|>'],
    do_sample: true,
    eos_token_id: [id['<|im_end|>'], id['<|endoftext|>']],
    pad_token_id: id['<|endoftext|>'],
    temperature: 0.7,
    top_p: 0.8,
    top_k: 20,
  });
}

// Llama-3-style: bos added by a TemplateProcessing post-processor, `ignore_merges`, no normalizer.
{
  const { vocab, merges } = train(llamaPattern, 300);
  const base = Object.keys(vocab).length;
  const names = ['<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'];
  const added = names.map((name, index) => addedToken(base + index, name, true));
  writeJson('llama3-model', 'tokenizer.json', {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: llamaPattern }, behavior: 'Isolated', invert: false },
        byteLevel(),
      ],
    },
    post_processor: {
      type: 'Sequence',
      processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        {
          type: 'TemplateProcessing',
          single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
          pair: [
            { SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } },
            { Sequence: { id: 'A', type_id: 0 } },
            { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } },
            { Sequence: { id: 'B', type_id: 1 } },
          ],
          special_tokens: {
            '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [base], tokens: ['<|begin_of_text|>'] },
          },
        },
      ],
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: true,
      vocab,
      merges,
    },
  });
  const id = Object.fromEntries(added.map((token) => [token.content, token.id]));
  writeJson('llama3-model', 'tokenizer_config.json', {
    added_tokens_decoder: addedTokensDecoder(added),
    bos_token: '<|begin_of_text|>',
    chat_template: llama3Template,
    clean_up_tokenization_spaces: true,
    eos_token: '<|eot_id|>',
    model_input_names: ['input_ids', 'attention_mask'],
    model_max_length: 131072,
    tokenizer_class: 'PreTrainedTokenizerFast',
  });
  writeJson('llama3-model', 'config.json', {
    architectures: ['LlamaForCausalLM'],
    attention_bias: false,
    bos_token_id: id['<|begin_of_text|>'],
    eos_token_id: [id['<|end_of_text|>'], id['<|eot_id|>']],
    hidden_act: 'silu',
    hidden_size: 64,
    intermediate_size: 128,
    max_position_embeddings: 1024,
    mlp_bias: false,
    model_type: 'llama',
    num_attention_heads: 4,
    num_hidden_layers: 2,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-5,
    rope_scaling: {
      factor: 8.0,
      high_freq_factor: 4.0,
      low_freq_factor: 1.0,
      original_max_position_embeddings: 256,
      rope_type: 'llama3',
    },
    rope_theta: 500000.0,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    vocab_size: base + added.length,
  });
}
