/**
 * An incremental recognizer of JSON that satisfies a JSON schema, one character at a time, for
 * constrained decoding of `response_format: json_schema` (`output-constraint.ts`). It holds the
 * subset of JSON Schema whose every keyword it can enforce character by character: `type` (one or
 * several), `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, and the
 * annotations (`title`, `description`, ...). A schema with any other keyword (`pattern`,
 * `minimum`, `anyOf`, `$ref`, ...) is refused by name: answering with JSON that may break it would
 * pass for an enforced schema. Objects are written with their declared properties only (each at
 * most once, any order, the required ones before the `}`), which satisfies the schema whatever its
 * `additionalProperties`; an object schema without properties takes any JSON object.
 */
import { ClawrlError } from '../spec/clawrl-error.js';
import { JsonPrefix, whitespace } from './json-prefix.js';

export interface Recognizer {
  /** False at the first character that cannot follow; the recognizer is then unusable. */
  push(character: string): boolean;
  /** The value so far is a whole value. */
  readonly complete: boolean;
  /** The value is complete and cannot take another character (a number can). */
  readonly closed: boolean;
  clone(): Recognizer;
}

export type RecognizerFactory = () => Recognizer;

const annotations = new Set(['title', 'description', 'default', 'examples', '$schema', '$id', '$comment', 'strict']);
const enforced = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const']);

/** A JsonPrefix as a recognizer (any JSON value, or any object). */
export class AnyJson implements Recognizer {
  constructor(private readonly prefix: JsonPrefix) {}
  push(character: string): boolean {
    return this.prefix.push(character);
  }
  get complete(): boolean {
    return this.prefix.complete;
  }
  get closed(): boolean {
    // Whitespace may always follow; a complete value ends where its container takes the next character.
    return false;
  }
  clone(): Recognizer {
    return new AnyJson(this.prefix.clone());
  }
}

/** One of several fixed texts (booleans, null, enum and const values as JSON), after optional whitespace. */
class OneOfTexts implements Recognizer {
  constructor(
    private texts: readonly string[],
    private offset = 0,
  ) {}
  push(character: string): boolean {
    if (this.offset === 0 && whitespace.has(character)) return true;
    const matching = this.texts.filter((text) => text[this.offset] === character);
    if (matching.length === 0) return false;
    this.texts = matching;
    this.offset += 1;
    return true;
  }
  get complete(): boolean {
    return this.texts.some((text) => text.length === this.offset);
  }
  get closed(): boolean {
    return this.texts.every((text) => text.length === this.offset);
  }
  /** The text matched, once it is closed (the candidates were narrowed to it). */
  get matched(): string | undefined {
    return this.closed ? this.texts[0] : undefined;
  }
  clone(): OneOfTexts {
    return new OneOfTexts(this.texts, this.offset);
  }
}

/** Any one of the alternatives, decided as characters rule them out (a `type` list). */
class Alternatives implements Recognizer {
  constructor(private options: Recognizer[]) {}
  push(character: string): boolean {
    this.options = this.options.filter((option) => option.push(character));
    return this.options.length > 0;
  }
  get complete(): boolean {
    return this.options.some((option) => option.complete);
  }
  get closed(): boolean {
    return this.options.every((option) => option.closed);
  }
  clone(): Recognizer {
    return new Alternatives(this.options.map((option) => option.clone()));
  }
}

/**
 * Feeds a container's current value: `taken` when it took the character, `ended` when it was a
 * whole value and the character is the container's (a number ends at the `,` after it), else
 * `refused`. A refused push may leave the child changed; it is not used again after `ended`.
 */
function pushChild(child: Recognizer, character: string): 'taken' | 'ended' | 'refused' {
  if (child.closed) return 'ended';
  const wasComplete = child.complete;
  if (child.push(character)) return 'taken';
  return wasComplete ? 'ended' : 'refused';
}

/**
 * One JSON value of a kind, told by its first character (a string's `"`, a number's `-` or digit),
 * recognized by `JsonPrefix`; an integer takes no fraction nor exponent.
 */
class ScalarValue implements Recognizer {
  constructor(
    private readonly kind: 'string' | 'number' | 'integer',
    private prefix: JsonPrefix | null = null,
  ) {}
  push(character: string): boolean {
    if (this.prefix === null) {
      if (whitespace.has(character)) return true;
      const starts = this.kind === 'string' ? character === '"' : character === '-' || (character >= '0' && character <= '9');
      if (!starts) return false;
      this.prefix = new JsonPrefix(false);
    } else if (this.kind === 'integer' && (character === '.' || character === 'e' || character === 'E')) {
      return false;
    }
    return this.prefix.push(character);
  }
  get complete(): boolean {
    return this.prefix?.complete ?? false;
  }
  get closed(): boolean {
    // A string ends at its closing quote; a number can always take another digit.
    return this.kind === 'string' && this.complete;
  }
  clone(): Recognizer {
    return new ScalarValue(this.kind, this.prefix?.clone() ?? null);
  }
}

interface ObjectShape {
  properties: ReadonlyMap<string, RecognizerFactory>;
  required: ReadonlySet<string>;
}

/** An object of the declared properties, each at most once, the required ones before `}`. */
class ObjectValue implements Recognizer {
  constructor(
    private readonly shape: ObjectShape,
    private state: 'before' | 'key-or-end' | 'key' | 'colon' | 'value' | 'after-value' | 'after-comma' | 'done' = 'before',
    private used: string[] = [],
    private key: OneOfTexts | null = null,
    private value: Recognizer | null = null,
  ) {}

  private remaining(): string[] {
    return [...this.shape.properties.keys()].filter((name) => !this.used.includes(name));
  }

  private canClose(): boolean {
    return [...this.shape.required].every((name) => this.used.includes(name));
  }

  private startKey(character: string): boolean {
    const texts = this.remaining().map((name) => JSON.stringify(name));
    this.key = new OneOfTexts(texts);
    this.state = 'key';
    return this.key.push(character);
  }

  push(character: string): boolean {
    switch (this.state) {
      case 'before':
        if (whitespace.has(character)) return true;
        if (character !== '{') return false;
        this.state = 'key-or-end';
        return true;
      case 'key-or-end':
        if (whitespace.has(character)) return true;
        if (character === '}') return this.close();
        return this.remaining().length > 0 && this.startKey(character);
      case 'key': {
        const key = this.key as OneOfTexts;
        if (!key.push(character)) return false;
        if (key.matched !== undefined) {
          this.used = [...this.used, JSON.parse(key.matched) as string];
          this.state = 'colon';
        }
        return true;
      }
      case 'colon':
        if (whitespace.has(character)) return true;
        if (character !== ':') return false;
        this.value = (this.shape.properties.get(this.used.at(-1) ?? '') as RecognizerFactory)();
        this.state = 'value';
        return true;
      case 'value': {
        const outcome = pushChild(this.value as Recognizer, character);
        if (outcome === 'taken') return true;
        if (outcome === 'refused') return false;
        this.state = 'after-value';
        return this.push(character);
      }
      case 'after-value':
        if (whitespace.has(character)) return true;
        if (character === '}') return this.close();
        if (character !== ',' || this.remaining().length === 0) return false;
        // After a comma a key must come, not `}`.
        this.state = 'after-comma';
        return true;
      case 'after-comma':
        if (whitespace.has(character)) return true;
        return this.startKey(character);
      case 'done':
        return false;
    }
  }

  private close(): boolean {
    if (!this.canClose()) return false;
    this.state = 'done';
    return true;
  }

  get complete(): boolean {
    return this.state === 'done';
  }
  get closed(): boolean {
    return this.state === 'done';
  }
  clone(): Recognizer {
    return new ObjectValue(this.shape, this.state, this.used, this.key?.clone() ?? null, this.value?.clone() ?? null);
  }
}

/** An array of items of one schema. */
class ArrayValue implements Recognizer {
  constructor(
    private readonly items: RecognizerFactory,
    private state: 'before' | 'value-or-end' | 'value' | 'after-value' | 'after-comma' | 'done' = 'before',
    private value: Recognizer | null = null,
  ) {}
  push(character: string): boolean {
    switch (this.state) {
      case 'before':
        if (whitespace.has(character)) return true;
        if (character !== '[') return false;
        this.state = 'value-or-end';
        return true;
      case 'value-or-end':
        if (whitespace.has(character)) return true;
        if (character === ']') {
          this.state = 'done';
          return true;
        }
        return this.startValue(character);
      case 'after-comma':
        if (whitespace.has(character)) return true;
        return this.startValue(character);
      case 'value': {
        const outcome = pushChild(this.value as Recognizer, character);
        if (outcome === 'taken') return true;
        if (outcome === 'refused') return false;
        this.state = 'after-value';
        return this.push(character);
      }
      case 'after-value':
        if (whitespace.has(character)) return true;
        if (character === ']') this.state = 'done';
        else if (character === ',') this.state = 'after-comma';
        else return false;
        return true;
      case 'done':
        return false;
    }
  }
  private startValue(character: string): boolean {
    this.value = this.items();
    this.state = 'value';
    return this.value.push(character);
  }
  get complete(): boolean {
    return this.state === 'done';
  }
  get closed(): boolean {
    return this.state === 'done';
  }
  clone(): Recognizer {
    return new ArrayValue(this.items, this.state, this.value?.clone() ?? null);
  }
}

type Schema = Record<string, unknown>;

/**
 * How a keyword the recognizer cannot enforce is met: `strict` refuses the schema
 * (`response_format`, which the caller can change); `lenient` drops it and enforces the rest
 * (a tool's parameters, which come from an agent's tool list the caller cannot change), a value
 * left without a type taking any JSON value.
 */
export type SchemaMode = 'strict' | 'lenient';

const anyValue: RecognizerFactory = () => new AnyJson(new JsonPrefix(false));

function refuse(path: string, what: string): never {
  throw new ClawrlError('unsupported', `The embedded engine cannot enforce ${what} in response_format's JSON schema (at ${path}); serve the model with an engine that enforces it (--engine vllm), or ask for json_object.`, { param: 'response_format' });
}

function compileType(type: string, schema: Schema, path: string, mode: SchemaMode): RecognizerFactory {
  const unenforceable = (what: string): RecognizerFactory => (mode === 'lenient' ? anyValue : refuse(path, what));
  switch (type) {
    case 'string':
    case 'number':
    case 'integer':
      return () => new ScalarValue(type);
    case 'boolean':
      return () => new OneOfTexts(['true', 'false']);
    case 'null':
      return () => new OneOfTexts(['null']);
    case 'array': {
      const items = schema.items === undefined ? anyValue : compileSchema(schema.items, `${path}.items`, mode);
      return () => new ArrayValue(items);
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return unenforceable('properties that are not an object');
      const names = Object.keys(properties);
      if (names.length === 0) return () => new AnyJson(new JsonPrefix(true));
      const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]).filter((name): name is string => typeof name === 'string') : []);
      for (const name of required) if (!names.includes(name)) return unenforceable(`a required property '${name}' without a schema`);
      const shape: ObjectShape = { properties: new Map(names.map((name) => [name, compileSchema(properties[name], `${path}.properties.${name}`, mode)])), required };
      return () => new ObjectValue(shape);
    }
    default:
      return unenforceable(`type '${type}'`);
  }
}

/** The recognizer of values a JSON schema accepts; in `strict` mode `unsupported` for a keyword it cannot enforce. */
export function compileSchema(schema: unknown, path = '$', mode: SchemaMode = 'strict'): RecognizerFactory {
  if (schema === true || (typeof schema === 'object' && schema !== null && Object.keys(schema).every((key) => annotations.has(key)))) return anyValue;
  const unenforceable = (what: string): RecognizerFactory => (mode === 'lenient' ? anyValue : refuse(path, what));
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return unenforceable('a schema that is not an object');
  const record = schema as Schema;
  const unenforced = Object.keys(record).find((key) => !enforced.has(key) && !annotations.has(key));
  if (unenforced !== undefined && mode === 'strict') refuse(path, `'${unenforced}'`);
  if ('const' in record) return () => new OneOfTexts([JSON.stringify(record.const)]);
  if (Array.isArray(record.enum)) return () => new OneOfTexts((record.enum as unknown[]).map((value) => JSON.stringify(value)));
  const types = record.type === undefined ? null : [record.type].flat();
  if (types === null || types.some((type) => typeof type !== 'string')) return unenforceable('a schema without a type');
  const factories = (types as string[]).map((type) => compileType(type, record, path, mode));
  return factories.length === 1 ? (factories[0] as RecognizerFactory) : () => new Alternatives(factories.map((factory) => factory()));
}

/**
 * Bounds runs of whitespace between JSON tokens (not inside strings) and which characters they may
 * use: JSON allows any, and a sampled reply must not be able to spend its tokens on blanks.
 */
export class WhitespaceBound implements Recognizer {
  constructor(
    private readonly inner: Recognizer,
    private readonly maxRun: number,
    private readonly allowed: ReadonlySet<string> = whitespace,
    private run = 0,
    private inString = false,
    private escaped = false,
  ) {}
  push(character: string): boolean {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (character === '\\') this.escaped = true;
      else if (character === '"') this.inString = false;
    } else if (character === '"') {
      this.inString = true;
    }
    const between = !this.inString && whitespace.has(character);
    if (between && !this.allowed.has(character)) return false;
    this.run = between ? this.run + 1 : 0;
    return this.run <= this.maxRun && this.inner.push(character);
  }
  get complete(): boolean {
    return this.inner.complete;
  }
  get closed(): boolean {
    return this.inner.closed;
  }
  clone(): Recognizer {
    return new WhitespaceBound(this.inner.clone(), this.maxRun, this.allowed, this.run, this.inString, this.escaped);
  }
}
