import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../core/seeded-random.js';
import { createHermesToolCallParser } from './tool-call-parser.js';
import { constrainedPartsOf, createOutputConstraint } from './output-constraint.js';
import { chooseToken } from './sampling-distribution.js';

// A small vocabulary: single characters, a few multi-character pieces, an end-of-turn token (id 0).
const pieces = ['', ...'abcdefghijklmnopqrstuvwxyz_{}[]":, \n<>/0123456789.-', 'Hello', ' world', '<tool_call>', '</tool_call>', '{"', '": ', 'get_weather', '"}'];
const endOfTurn = 0;
const weather = [{ name: 'get_weather', parameters: { type: 'object' } }, { name: 'get_time' }];

/** Decodes with the constraint, the "model" preferring `preferred` texts in that order, and free text most of all. */
function decode(parts: NonNullable<ReturnType<typeof constrainedPartsOf>>, preferred: string[], seed = 1, temperature = 0, textLogit = 10): string {
  const constraint = createOutputConstraint(parts, pieces, [endOfTurn]);
  const random = createSeededRandom(seed);
  const logits = new Float32Array(pieces.length).map((_, tokenId) => {
    const text = pieces[tokenId] ?? '';
    if (tokenId === endOfTurn) return 5;
    if (text === 'Hello' || text === ' world') return textLogit;
    const rank = preferred.indexOf(text);
    return rank === -1 ? 0 : 8 - rank;
  });
  const scale = temperature > 0 ? temperature : 1;
  const normaliser = Math.log(logits.reduce((sum, logit) => sum + Math.exp(logit / scale), 0));
  let output = '';
  for (let step = 0; step < 400; step += 1) {
    const choice = chooseToken(logits, { temperature, topP: 1, topK: 0, topLogprobs: 0 }, random, constraint.allowedTokens());
    if (choice.tokenId === endOfTurn) return output;
    // The recorded log-prob is the model's own, not the constrained distribution's.
    expect(choice.logprob).toBeCloseTo((logits[choice.tokenId] ?? 0) / scale - normaliser, 9);
    constraint.advance(choice.tokenId);
    output += pieces[choice.tokenId] ?? '';
  }
  throw new Error(`no end of turn after ${JSON.stringify(output)}`);
}

describe('output constraints', () => {
  it('forces a named tool call the output parser reads, however much the model would rather write text', () => {
    const parts = constrainedPartsOf({ toolChoice: { name: 'get_weather' }, tools: weather })!;
    const text = decode(parts, ['}', '{', '"']);
    expect(text).toBe('<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>');
    const parser = createHermesToolCallParser({ createId: () => 'call_1' });
    const deltas = [...parser.push(text), ...parser.finish()];
    expect(deltas).toContainEqual({ type: 'tool-call-start', index: 0, id: 'call_1', name: 'get_weather' });
  });

  it('with tool_choice required, calls one of the tools, with arguments that are a JSON object, for any draw', () => {
    const parts = constrainedPartsOf({ toolChoice: 'required', tools: weather })!;
    for (let seed = 1; seed <= 20; seed += 1) {
      const text = decode(parts, ['}', '"', 'a', ':', ' ', '1', ','], seed, 1, 2);
      const call = /^<tool_call>\n(\{.*\})\n<\/tool_call>$/s.exec(text)?.[1];
      expect(call, text).toBeDefined();
      const parsed = JSON.parse(call ?? '') as { name: string; arguments: unknown };
      expect(['get_weather', 'get_time']).toContain(parsed.name);
      expect(typeof parsed.arguments === 'object' && parsed.arguments !== null && !Array.isArray(parsed.arguments)).toBe(true);
    }
  });

  it('with response_format json_object, writes one JSON object and then ends', () => {
    const parts = constrainedPartsOf({ toolChoice: 'auto', tools: [], responseFormat: { type: 'json_object' } })!;
    for (let seed = 1; seed <= 20; seed += 1) {
      const text = decode(parts, ['}', '"', 'a', ':', '1', ','], seed, 1, 2);
      const value: unknown = JSON.parse(text);
      expect(typeof value === 'object' && value !== null && !Array.isArray(value), text).toBe(true);
    }
  });

  it('with response_format json_schema, writes JSON the schema accepts, for any draw', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'array', items: { type: 'string' } }, c: { enum: ['x', 'y'] } }, required: ['a', 'c'] };
    const parts = constrainedPartsOf({ toolChoice: 'auto', tools: [], responseFormat: { type: 'json_schema', name: 'answer', schema } })!;
    for (let seed = 1; seed <= 20; seed += 1) {
      const text = decode(parts, ['}', '"', 'a', ':', '1', ',', ']', 'x'], seed, 1, 2);
      const value = JSON.parse(text) as Record<string, unknown>;
      expect(Object.keys(value).every((key) => ['a', 'b', 'c'].includes(key)), text).toBe(true);
      expect(Number.isInteger(value.a), text).toBe(true);
      expect(['x', 'y'], text).toContain(value.c);
      if ('b' in value) expect((value.b as unknown[]).every((item) => typeof item === 'string'), text).toBe(true);
    }
  });

  const add = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };
  const lookUp = { type: 'object', properties: { city: { type: 'string', minLength: 1 }, unit: { anyOf: [{ const: 'c' }, { const: 'f' }] } }, required: ['city'] };
  const callOf = (text: string) => JSON.parse(/^<tool_call>\n(\{.*\})\n<\/tool_call>$/s.exec(text)?.[1] ?? 'null') as { name: string; arguments: Record<string, unknown> } | null;

  it("holds a forced tool's arguments to its parameter schema: every required key, of its type, however much the model would close the object", () => {
    const tools = [{ name: 'add', parameters: add }];
    for (const toolChoice of [{ name: 'add' }, 'required'] as const) {
      for (let seed = 1; seed <= 20; seed += 1) {
        const text = decode(constrainedPartsOf({ toolChoice, tools })!, ['}', '"', 'c', ':', ' ', '1', ','], seed, 1, 2);
        const call = callOf(text);
        expect(call?.name, text).toBe('add');
        expect(Object.keys(call?.arguments ?? {}).sort(), text).toEqual(['a', 'b']);
        expect(typeof call?.arguments.a === 'number' && typeof call.arguments.b === 'number', text).toBe(true);
      }
    }
  });

  it('with required over several tools, holds the arguments to the schema of the tool the reply names', () => {
    const tools = [{ name: 'add', parameters: add }, { name: 'look_up', parameters: lookUp }, { name: 'get_time' }];
    const names = new Set<string>();
    for (let seed = 1; seed <= 30; seed += 1) {
      const text = decode(constrainedPartsOf({ toolChoice: 'required', tools })!, ['}', '"', 'c', 'l', 'g', ':', ' ', '1', ','], seed, 1, 2);
      const call = callOf(text);
      expect(call, text).not.toBeNull();
      names.add(call?.name ?? '');
      const keys = Object.keys(call?.arguments ?? {});
      if (call?.name === 'add') expect(keys.sort(), text).toEqual(['a', 'b']);
      // minLength and anyOf are not enforceable character by character; the properties and required keys still hold.
      if (call?.name === 'look_up') {
        expect(keys, text).toContain('city');
        expect(keys.every((key) => key === 'city' || key === 'unit'), text).toBe(true);
        expect(typeof call.arguments.city, text).toBe('string');
      }
    }
    expect(names.size).toBeGreaterThan(1);
  });

  it('allows at most one space between JSON tokens, never a newline, however much the model wants blanks', () => {
    const tools = [{ name: 'add', parameters: add }];
    const formats = [{ toolChoice: { name: 'add' }, tools }, { toolChoice: 'auto', tools: [], responseFormat: { type: 'json_object' } }, { toolChoice: 'auto', tools: [], responseFormat: { type: 'json_schema', name: 'sum', schema: add } }] as const;
    for (const request of formats) {
      for (let seed = 1; seed <= 10; seed += 1) {
        const text = decode(constrainedPartsOf(request)!, ['\n', ' ', '"', 'a', ':', '1', ',', '}'], seed, 1, 2);
        const body = request.tools.length > 0 ? (/"arguments": (.*)\}\n<\/tool_call>$/s.exec(text)?.[1] ?? '') : text;
        expect(() => JSON.parse(body), text).not.toThrow();
        const outsideStrings = body.replace(/"(?:[^"\\]|\\.)*"/g, '""');
        expect(outsideStrings, text).not.toContain('\n');
        expect(outsideStrings, text).not.toContain('  ');
      }
    }
  });

  it('asks nothing of free text', () => {
    expect(constrainedPartsOf({ toolChoice: 'auto', tools: weather })).toBeNull();
    expect(constrainedPartsOf({ toolChoice: 'none', tools: weather, responseFormat: undefined })).toBeNull();
  });
});
