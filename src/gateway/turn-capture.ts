/**
 * Accumulates an engine's generation events into what the store records and what the
 * non-streaming response returns. The engine's final `end` result is authoritative; the running
 * accumulation covers generations that never reach it (client gone, engine failure).
 */
import type { ChatMessage, ToolCall } from '../spec/chat.js';
import type {
  ChoiceResult,
  FinishReason,
  GenerateEvent,
  GenerateResult,
  PolicyVersion,
  SampledToken,
} from '../spec/inference-engine.js';

interface ChoiceState {
  content: string;
  toolCalls: ToolCall[];
  tokens: SampledToken[];
  finishReason: FinishReason | null;
}

export class TurnCapture {
  promptTokenIds: number[] = [];
  policyVersion: PolicyVersion = 0;
  firstContentAt: number | null = null;
  result: GenerateResult | null = null;
  readonly #choices: ChoiceState[] = [];

  constructor(private readonly choiceCount: number) {
    for (let index = 0; index < choiceCount; index += 1) {
      this.#choices.push({ content: '', toolCalls: [], tokens: [], finishReason: null });
    }
  }

  #choice(index: number): ChoiceState {
    const choice = this.#choices[index];
    if (choice === undefined) throw new RangeError(`engine reported choice ${index} of ${this.choiceCount}`);
    return choice;
  }

  apply(event: GenerateEvent, now: number): void {
    switch (event.type) {
      case 'start':
        this.promptTokenIds = event.promptTokenIds;
        this.policyVersion = event.policyVersion;
        return;
      case 'text-delta':
        this.firstContentAt ??= now;
        this.#choice(event.choiceIndex).content += event.text;
        return;
      case 'tool-call-delta': {
        this.firstContentAt ??= now;
        const calls = this.#choice(event.choiceIndex).toolCalls;
        const call = (calls[event.toolCallIndex] ??= { id: event.id ?? '', name: event.name ?? '', arguments: '' });
        if (event.id !== undefined) call.id = event.id;
        if (event.name !== undefined) call.name = event.name;
        call.arguments += event.argumentsDelta;
        return;
      }
      case 'tokens':
        this.#choice(event.choiceIndex).tokens.push(...event.tokens);
        return;
      case 'choice-end':
        this.#choice(event.choiceIndex).finishReason = event.finishReason;
        return;
      case 'end':
        this.result = event.result;
        this.promptTokenIds = event.result.promptTokenIds;
        this.policyVersion = event.result.policyVersion;
        return;
    }
  }

  /** Sampled tokens of a choice with their alternatives, for wire log-probs. */
  tokensOf(index: number): SampledToken[] {
    return this.#choice(index).tokens;
  }

  /** The choices as recorded: from the final result when there is one, else as accumulated. */
  choices(fallbackFinishReason: FinishReason): ChoiceResult[] {
    if (this.result !== null) return this.result.choices;
    return this.#choices.map((choice, index) => {
      const message: ChatMessage = {
        role: 'assistant',
        content: choice.content,
        ...(choice.toolCalls.length > 0 ? { toolCalls: choice.toolCalls } : {}),
      };
      return {
        index,
        message,
        toolCalls: choice.toolCalls,
        responseTokenIds: choice.tokens.map((token) => token.id),
        logprobs: choice.tokens.map((token) => token.logprob),
        finishReason: choice.finishReason ?? fallbackFinishReason,
      };
    });
  }
}
