/**
 * Constrained decoding for the embedded engine: the text a reply may take, as a sequence of parts
 * (fixed text, one of several texts, a JSON value), and at each step the tokens whose text keeps
 * the reply inside it. A forced tool call is the Hermes / Qwen call the output parser reads
 * (`tool-call-parser.ts`), `<tool_call>\n{"name": "<tool>", "arguments": {...}}\n</tool_call>`,
 * its arguments held to the chosen tool's parameter schema; a JSON `response_format` is one JSON
 * object, or a value of its schema. Once the text is complete only an end-of-turn token may follow.
 *
 * The recorded log-probs stay those of the model's own distribution (`sampling-distribution.ts`),
 * the mask only narrows what is drawn from, as top-k and top-p do.
 */
import type { ResponseFormat, ToolChoice, ToolDefinition } from '../spec/chat.js';
import { JsonPrefix } from './json-prefix.js';
import { AnyJson, compileSchema, WhitespaceBound, type Recognizer, type RecognizerFactory } from './json-schema-prefix.js';

/**
 * Between JSON tokens at most one space, as compact JSON with `, ` and `: ` has: a sampled reply
 * cannot spend its tokens on blank lines and indentation, and the text stays valid JSON.
 */
const between = (inner: Recognizer): Recognizer => new WhitespaceBound(inner, 1, new Set([' ']));

/**
 * A JSON value part: one recognizer, or, after a one-of part, the recognizer of the text chosen
 * there (a tool's arguments depend on which tool was named).
 */
type Part =
  | { kind: 'text'; text: string }
  | { kind: 'one-of'; texts: string[] }
  | { kind: 'json'; create: RecognizerFactory }
  | { kind: 'json-by-choice'; create: ReadonlyMap<string, RecognizerFactory> };

const jsonObject: RecognizerFactory = () => between(new AnyJson(new JsonPrefix(true)));

/**
 * A tool's arguments: a JSON object of its parameter schema. Keywords the recognizer cannot enforce
 * are dropped rather than refused (`compileSchema`'s lenient mode): an agent's tool list is not the
 * caller's to change, and the properties and required keys still hold.
 */
function toolArguments(tool: ToolDefinition): RecognizerFactory {
  const parameters = tool.parameters ?? {};
  const properties = parameters.properties;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return jsonObject;
  const schema = compileSchema({ type: 'object', properties, ...(parameters.required === undefined ? {} : { required: parameters.required }) }, '$', 'lenient');
  return () => between(schema());
}

/** Where one reply is in its parts. */
class ConstraintState {
  constructor(
    private readonly parts: readonly Part[],
    private index = 0,
    /** Characters of the current text part matched, or the one-of texts still matching with their offset. */
    private offset = 0,
    private candidates: string[] | null = null,
    private json: Recognizer | null = null,
    /** The text the last one-of part matched. */
    private choice = '',
  ) {}

  clone(): ConstraintState {
    return new ConstraintState(this.parts, this.index, this.offset, this.candidates, this.json?.clone() ?? null, this.choice);
  }

  /** Every part is written; a JSON value that is the last part may end wherever it is whole. */
  get complete(): boolean {
    if (this.index >= this.parts.length) return true;
    return this.index === this.parts.length - 1 && this.json?.complete === true;
  }

  pushText(text: string): boolean {
    for (const character of text) if (!this.push(character)) return false;
    return true;
  }

  private push(character: string): boolean {
    const part = this.parts[this.index];
    if (part === undefined) return false;
    if (part.kind === 'text') {
      if (part.text[this.offset] !== character) return false;
      this.offset += 1;
      if (this.offset === part.text.length) this.next();
      return true;
    }
    if (part.kind === 'one-of') {
      const matching = (this.candidates ?? part.texts).filter((text) => text[this.offset] === character);
      if (matching.length === 0) return false;
      this.offset += 1;
      // One-of texts end in a character none of them has elsewhere (a closing quote), so no text is a prefix of another.
      const matched = matching.find((text) => text.length === this.offset);
      if (matched === undefined) this.candidates = matching;
      else {
        this.choice = matched;
        this.next();
      }
      return true;
    }
    this.json ??= part.kind === 'json' ? part.create() : (part.create.get(this.choice) as RecognizerFactory)();
    const wasComplete = this.json.complete;
    if (this.json.push(character)) {
      if (this.json.closed) this.next();
      return true;
    }
    // A whole value (a number, an object with whitespace allowed after it) ends where the next part begins.
    if (!wasComplete || this.index === this.parts.length - 1) return false;
    this.next();
    return this.push(character);
  }

  private next(): void {
    this.index += 1;
    this.offset = 0;
    this.candidates = null;
    this.json = null;
  }
}

export interface OutputConstraint {
  /** Which tokens may come next: 1 for allowed, by token id. */
  allowedTokens(): Uint8Array;
  /** Moves past a sampled token. */
  advance(tokenId: number): void;
}

/** The parts of a request's constrained output, or null when it asks for free text. */
export function constrainedPartsOf(request: { toolChoice: ToolChoice; tools: readonly ToolDefinition[]; responseFormat?: ResponseFormat }): Part[] | null {
  const { toolChoice } = request;
  const forced =
    toolChoice === 'required'
      ? request.tools
      : typeof toolChoice === 'object'
        ? [request.tools.find((tool) => tool.name === toolChoice.name) ?? { name: toolChoice.name }]
        : null;
  if (forced !== null) {
    // The name's text as it stands between the quotes, with its closing quote: the key of its arguments' schema.
    const named = new Map(forced.map((tool) => [`${JSON.stringify(tool.name).slice(1, -1)}"`, toolArguments(tool)]));
    return [
      { kind: 'text', text: '<tool_call>\n{"name": "' },
      { kind: 'one-of', texts: [...named.keys()] },
      { kind: 'text', text: ', "arguments": ' },
      { kind: 'json-by-choice', create: named },
      { kind: 'text', text: '}\n</tool_call>' },
    ];
  }
  if (request.responseFormat?.type === 'json_object') return [{ kind: 'json', create: jsonObject }];
  if (request.responseFormat?.type === 'json_schema') {
    const schema = compileSchema(request.responseFormat.schema);
    return [{ kind: 'json', create: () => between(schema()) }];
  }
  return null;
}

/**
 * @param tokenTexts every token id's text (empty for special tokens, which are never allowed but as
 *   end-of-turn tokens once the output is complete)
 */
export function createOutputConstraint(parts: readonly Part[], tokenTexts: readonly string[], stopTokenIds: readonly number[]): OutputConstraint {
  let state = new ConstraintState(parts);
  const stops = new Set(stopTokenIds);
  return {
    allowedTokens() {
      const allowed = new Uint8Array(tokenTexts.length);
      if (state.complete) {
        for (const tokenId of stops) if (tokenId < allowed.length) allowed[tokenId] = 1;
        return allowed;
      }
      tokenTexts.forEach((text, tokenId) => {
        if (text === '' || stops.has(tokenId)) return;
        if (state.clone().pushText(text)) allowed[tokenId] = 1;
      });
      return allowed;
    },
    advance(tokenId) {
      if (stops.has(tokenId)) return;
      const next = state.clone();
      // A token the mask allowed always fits; the check keeps a stray one from corrupting the state.
      if (next.pushText(tokenTexts[tokenId] ?? '')) state = next;
    },
  };
}
