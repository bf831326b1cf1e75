import { describe, expect, it } from 'vitest';
import { JsonPrefix } from './json-prefix.js';
import { AnyJson, WhitespaceBound } from './json-schema-prefix.js';

const accepts = (text: string, objectOnly = false) => new JsonPrefix(objectOnly).pushText(text);
const completes = (text: string, objectOnly = false) => {
  const prefix = new JsonPrefix(objectOnly);
  return prefix.pushText(text) && prefix.complete;
};

describe('JsonPrefix', () => {
  it('accepts every prefix of valid JSON and says when the value is complete', () => {
    const documents = [
      '{"city": "Paris", "days": [1, 2.5, -3e+2, 0], "ok": true, "none": null, "nested": {"a": {}}}',
      ' { "escaped": "a\\"b\\\\c\\u00e9\\n" , "empty": [] } ',
      '[]',
      '"text"',
      '-0.5E-3',
      'false',
    ];
    for (const document of documents) {
      for (let length = 0; length < document.trimEnd().length; length += 1) {
        expect(accepts(document.slice(0, length)), document.slice(0, length)).toBe(true);
      }
      expect(completes(document), document).toBe(true);
      expect(JSON.parse(document)).toBeDefined();
    }
    expect(completes('{"a": 1')).toBe(false);
    expect(completes('12')).toBe(true);
    expect(completes('1.')).toBe(false);
  });

  it('rejects the first character that cannot follow', () => {
    for (const bad of ['{a', '{"a" 1}', '{"a": 1,}', '[1 2]', '{"a": tru3}', '01', '1.e5', '"a\nb"', '"\\x"', '{"a": 1}}', '{"a": 1} x', '[}', '{]', '"\\u12g4"']) {
      expect(accepts(bad), bad).toBe(false);
    }
  });

  it('keeps every number finite once parsed: parts of at most 20 digits, exponents of at most 2', () => {
    // 1e999 and 400 nines parse to Infinity, which JSON writes back as null.
    for (const bad of ['{"a": 1e999}', `{"a": ${'9'.repeat(400)}}`, `[0.${'1'.repeat(21)}]`, '-1E+100']) {
      expect(accepts(bad), bad).toBe(false);
    }
    for (const good of [`{"a": ${'9'.repeat(20)}.${'9'.repeat(20)}e99}`, '[-0.5E-12, 1e+9, 12345678901234567890]']) {
      expect(completes(good), good).toBe(true);
      expect(JSON.stringify(JSON.parse(good))).not.toContain('null');
    }
  });

  it('bounds runs of whitespace between tokens under WhitespaceBound, not inside strings', () => {
    const bounded = (text: string) => {
      const recognizer = new WhitespaceBound(new AnyJson(new JsonPrefix(true)), 2);
      return [...text].every((character) => recognizer.push(character));
    };
    expect(bounded('{  "a":\n\t1}')).toBe(true);
    expect(bounded('{   "a": 1}')).toBe(false);
    expect(bounded('{"a": "     "}')).toBe(true);
  });

  it('takes only an object at the top level when asked', () => {
    expect(accepts('[1]', true)).toBe(false);
    expect(accepts('"a"', true)).toBe(false);
    expect(accepts('  {"a": [1]}', true)).toBe(true);
    expect(completes('{"a": [1]}', true)).toBe(true);
  });

  it('clones its state: a copy fed further leaves the original where it was', () => {
    const prefix = new JsonPrefix(true);
    prefix.pushText('{"a": [1');
    const copy = prefix.clone();
    expect(copy.pushText(']}')).toBe(true);
    expect(copy.complete).toBe(true);
    expect(prefix.complete).toBe(false);
    expect(prefix.pushText(', 2]}')).toBe(true);
  });
});
