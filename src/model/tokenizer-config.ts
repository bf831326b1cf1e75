/**
 * `tokenizer_config.json`, validated with zod: the special token names, the chat template(s) and
 * the decoding flags. Token fields come either as plain strings or, in older files, as serialized
 * `AddedToken` objects (`{"__type": "AddedToken", "content": "<s>", ...}`); both are normalized to
 * the token text.
 */
import { z } from 'zod';
import { ClawrlError } from '../spec/clawrl-error.js';

export interface TokenizerConfig {
  bosToken: string | null;
  eosToken: string | null;
  padToken: string | null;
  unkToken: string | null;
  additionalSpecialTokens: string[];
  /** The default chat template, if the file has one. */
  chatTemplate: string | null;
  /** Named templates (`tool_use`, `rag`, ...) from the list form of `chat_template`. */
  namedChatTemplates: Record<string, string>;
  /** Every other key, untouched, for the tokenizer library. */
  raw: Record<string, unknown>;
}

const tokenSchema = z.union([z.string(), z.looseObject({ content: z.string() })]).nullish();

const tokenizerConfigSchema = z.looseObject({
  bos_token: tokenSchema,
  eos_token: tokenSchema,
  pad_token: tokenSchema,
  unk_token: tokenSchema,
  additional_special_tokens: z.array(tokenSchema).nullish(),
  chat_template: z
    .union([z.string(), z.array(z.object({ name: z.string(), template: z.string() }))])
    .nullish(),
});

function tokenText(value: z.infer<typeof tokenSchema>): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.content;
}

/** Validates a parsed `tokenizer_config.json`. Throws `configuration_error` naming the bad field. */
export function parseTokenizerConfig(json: unknown): TokenizerConfig {
  const result = tokenizerConfigSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
    throw new ClawrlError(
      'configuration_error',
      `tokenizer_config.json: invalid field ${field} (${issue?.message ?? 'invalid'})`,
      { param: field },
    );
  }
  const data = result.data;
  let chatTemplate: string | null = null;
  const namedChatTemplates: Record<string, string> = {};
  if (typeof data.chat_template === 'string') {
    chatTemplate = data.chat_template;
  } else if (Array.isArray(data.chat_template)) {
    for (const { name, template } of data.chat_template) {
      if (name === 'default') chatTemplate = template;
      else namedChatTemplates[name] = template;
    }
  }
  return {
    bosToken: tokenText(data.bos_token),
    eosToken: tokenText(data.eos_token),
    padToken: tokenText(data.pad_token),
    unkToken: tokenText(data.unk_token),
    additionalSpecialTokens: (data.additional_special_tokens ?? [])
      .map(tokenText)
      .filter((token): token is string => token !== null),
    chatTemplate,
    namedChatTemplates,
    raw: data,
  };
}
