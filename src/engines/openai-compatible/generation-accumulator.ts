/**
 * Builds a `GenerateResult` from the events an adapter emits, so the final result is by
 * construction what the stream said: concatenated text deltas, tool calls rebuilt from their
 * deltas, and exactly the token ids and log-probs the `tokens` events carried.
 */
import type { ToolCall } from '../../spec/chat.js';
import type { ChoiceResult, FinishReason, GenerateEvent, GenerateResult, PolicyVersion } from '../../spec/inference-engine.js';

type ChoiceEvent = Exclude<GenerateEvent, { type: 'start' } | { type: 'end' }>;

interface ChoiceState {
  content: string;
  toolCalls: ToolCall[];
  responseTokenIds: number[];
  logprobs: number[];
  finishReason: FinishReason | null;
  /** False once a token came without an id or log-prob, or ids without log-probs. */
  exact: boolean;
}

export class GenerationAccumulator {
  private readonly choices: ChoiceState[];

  constructor(choiceCount: number) {
    this.choices = Array.from({ length: choiceCount }, () => ({
      content: '',
      toolCalls: [],
      responseTokenIds: [],
      logprobs: [],
      finishReason: null,
      exact: true,
    }));
  }

  private choice(index: number): ChoiceState {
    const choice = this.choices[index];
    if (choice === undefined) throw new RangeError(`choice ${index} is out of range`);
    return choice;
  }

  hasChoice(index: number): boolean {
    return index >= 0 && index < this.choices.length;
  }

  apply(event: ChoiceEvent): void {
    const choice = this.choice(event.choiceIndex);
    switch (event.type) {
      case 'text-delta':
        choice.content += event.text;
        return;
      case 'tool-call-delta': {
        const existing = choice.toolCalls[event.toolCallIndex];
        if (existing === undefined) {
          choice.toolCalls[event.toolCallIndex] = { id: event.id ?? '', name: event.name ?? '', arguments: event.argumentsDelta };
        } else {
          existing.arguments += event.argumentsDelta;
        }
        return;
      }
      case 'tokens':
        for (const token of event.tokens) {
          if (token.id < 0 || Number.isNaN(token.logprob)) choice.exact = false;
          choice.responseTokenIds.push(token.id);
          choice.logprobs.push(token.logprob);
        }
        return;
      case 'choice-end':
        choice.finishReason = event.finishReason;
        return;
    }
  }

  /** Marks a choice's token record as unusable for training (ids missing or mismatched). */
  markInexact(index: number): void {
    this.choice(index).exact = false;
  }

  unfinishedChoices(): number[] {
    return this.choices.flatMap((choice, index) => (choice.finishReason === null ? [index] : []));
  }

  result(options: {
    promptTokenIds: number[];
    policyVersion: PolicyVersion;
    usage: { promptTokens: number; completionTokens: number } | null;
  }): GenerateResult {
    const exact = options.promptTokenIds.length > 0 && this.choices.every((choice) => choice.exact);
    const choices: ChoiceResult[] = this.choices.map((choice, index) => {
      const toolCalls = choice.toolCalls.filter((call): call is ToolCall => call !== undefined);
      return {
        index,
        message: { role: 'assistant', content: choice.content, ...(toolCalls.length > 0 ? { toolCalls } : {}) },
        toolCalls,
        // Ids are only reported when every one is exact: a partial record would train on drift.
        responseTokenIds: exact ? choice.responseTokenIds : [],
        logprobs: exact ? choice.logprobs : [],
        finishReason: choice.finishReason ?? 'error',
      };
    });
    const sampled = this.choices.reduce((total, choice) => total + choice.responseTokenIds.length, 0);
    return {
      promptTokenIds: options.promptTokenIds,
      choices,
      policyVersion: options.policyVersion,
      trainable: exact,
      usage: options.usage ?? { promptTokens: options.promptTokenIds.length, completionTokens: sampled },
    };
  }
}
