import { describe, expect, it } from 'vitest';
import { ClawrlError } from '../spec/clawrl-error.js';
import { compileSchema, WhitespaceBound } from './json-schema-prefix.js';

const weather = {
  type: 'object',
  description: 'a forecast',
  properties: {
    city: { type: 'string' },
    days: { type: 'integer' },
    unit: { enum: ['celsius', 'fahrenheit'] },
    temperatures: { type: 'array', items: { type: 'number' } },
    note: { type: ['string', 'null'] },
    ok: { type: 'boolean' },
  },
  required: ['city', 'days'],
  additionalProperties: false,
};

const accepts = (schema: unknown, text: string) => {
  const recognizer = compileSchema(schema)();
  return [...text].every((character) => recognizer.push(character));
};
const completes = (schema: unknown, text: string) => {
  const recognizer = compileSchema(schema)();
  return [...text].every((character) => recognizer.push(character)) && recognizer.complete;
};

describe('compileSchema', () => {
  it('accepts every prefix of an instance and completes on it', () => {
    const instances = [
      '{"city": "Paris", "days": 3}',
      '{ "days": 10 , "city": "Lyon \\"centre\\"", "unit": "celsius", "temperatures": [1.5, -2, 3e2], "note": null, "ok": true }',
      '{"city":"x","days":0,"temperatures":[],"note":"warm"}',
    ];
    for (const instance of instances) {
      JSON.parse(instance);
      for (let length = 0; length < instance.length; length += 1) expect(accepts(weather, instance.slice(0, length)), instance.slice(0, length)).toBe(true);
      expect(completes(weather, instance), instance).toBe(true);
    }
  });

  it('refuses what the schema does not allow, at the first character that breaks it', () => {
    for (const bad of [
      '{"city": "Paris"}', // days is required
      '{"country": "FR"}', // not a declared property
      '{"city": 1',
      '{"city": "a", "city": "b"',
      '{"city": "a", "days": 1.5',
      '{"city": "a", "days": 1, "unit": "kelvin"',
      '{"city": "a", "days": 1, "note": 3',
      '{"city": "a", "days": 1, "temperatures": ["x"',
      '{"city": "a", "days": 1,}',
      '[1]',
    ]) {
      expect(completes(weather, bad), bad).toBe(false);
      expect(accepts(weather, `${bad}`) && completes(weather, bad), bad).toBe(false);
    }
    expect(accepts(weather, '{"city": "Paris"}')).toBe(false);
    expect(accepts(weather, '{"country"')).toBe(false);
  });

  it('takes any JSON where the schema says nothing, and consts', () => {
    expect(completes({ type: 'object' }, '{"anything": [1, {"b": null}]}')).toBe(true);
    expect(completes({}, '[1, "two"]')).toBe(true);
    expect(completes({ const: 'fixed' }, '"fixed"')).toBe(true);
    expect(accepts({ const: 'fixed' }, '"other"')).toBe(false);
  });

  it('refuses, by name, a keyword it cannot enforce', () => {
    for (const [schema, keyword] of [
      [{ type: 'string', pattern: '^a' }, "'pattern'"],
      [{ type: 'object', properties: { n: { type: 'integer', minimum: 3 } } }, "'minimum'"],
      [{ anyOf: [{ type: 'string' }] }, "'anyOf'"],
      [{ $ref: '#/defs/x' }, "'$ref'"],
      [{ type: 'date' }, "type 'date'"],
    ] as const) {
      let caught: unknown;
      try {
        compileSchema(schema);
      } catch (error) {
        caught = error;
      }
      expect(ClawrlError.isInstance(caught) && caught.code === 'unsupported', JSON.stringify(schema)).toBe(true);
      expect((caught as Error).message).toContain(keyword);
    }
  });

  it('in lenient mode drops the keywords it cannot enforce and enforces the rest', () => {
    const schema = { type: 'object', properties: { city: { type: 'string', pattern: '^[A-Z]' }, days: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }, required: ['city'], additionalProperties: false };
    expect(() => compileSchema(schema)).toThrow(/pattern/);
    const feed = (text: string) => {
      const recognizer = compileSchema(schema, '$', 'lenient')();
      return [...text].every((character) => recognizer.push(character)) && recognizer.complete;
    };
    expect(feed('{"city": "paris", "days": [1]}')).toBe(true);
    expect(feed('{"days": 3}')).toBe(false);
    expect(feed('{"city": 3}')).toBe(false);
    expect(feed('{"city": "a", "country": "b"}')).toBe(false);
  });

  it('bounds whitespace between tokens to the allowed characters', () => {
    const spaces = () => new WhitespaceBound(compileSchema(weather)(), 1, new Set([' ']));
    const feed = (text: string) => {
      const recognizer = spaces();
      return [...text].every((character) => recognizer.push(character));
    };
    expect(feed('{"city": "a\\nb  c"')).toBe(true);
    expect(feed('{\n"city"')).toBe(false);
    expect(feed('{"city":  "a"')).toBe(false);
  });

  it('bounds whitespace between tokens, not inside strings', () => {
    const bounded = () => new WhitespaceBound(compileSchema(weather)(), 2);
    const feed = (text: string) => {
      const recognizer = bounded();
      return [...text].every((character) => recognizer.push(character));
    };
    expect(feed('{  "city": "a     b"')).toBe(true);
    expect(feed('{   "city"')).toBe(false);
  });
});
