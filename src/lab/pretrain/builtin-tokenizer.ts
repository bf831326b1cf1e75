/**
 * The built-in model's tokenizer files, trained on rendered transcripts of the training split of
 * the corpus (chat template included, so role headers become single tokens where frequent).
 */
import { createChatTemplate } from '../../model/chat-template.js';
import { chatmlTemplate } from '../../model/chatml-template.js';
import { generateCorpus } from '../corpus/corpus-generator.js';
import { tokenizerConfigOf, tokenizerJsonOf, trainByteLevelBpe } from './byte-level-bpe.js';

export interface BuiltinTokenizerOptions {
  seed: number | string;
  /** Transcripts to learn merges from. */
  exampleCount: number;
  vocabularySize: number;
}

export interface BuiltinTokenizerFiles {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

export function buildBuiltinTokenizer(options: BuiltinTokenizerOptions): BuiltinTokenizerFiles {
  const template = createChatTemplate({ source: chatmlTemplate });
  const examples = generateCorpus({ seed: `${options.seed}:tokenizer`, count: options.exampleCount, split: 'train' });
  const texts = examples.map((example) => template.render({ messages: example.messages, addGenerationPrompt: false }));
  const bpe = trainByteLevelBpe({ texts, vocabularySize: options.vocabularySize });
  return { tokenizerJson: tokenizerJsonOf(bpe), tokenizerConfig: tokenizerConfigOf(bpe) };
}
