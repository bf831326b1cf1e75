/**
 * Each user's memory in the gateway (`--user-memory`, `docs/memory.md`): what a user's request is
 * served with, and what the user's explicit feedback adds to it. The judge adds the hints it
 * accepts (`judge/judge-turn.ts`); the admin routes show and edit it (`admin/user-memory-routes.ts`).
 */
import { memoryBlockOf, servesMemory, withUserMemory } from '../core/user-memory-context.js';
import { memoryEntryTextOf } from '../core/user-memory-text.js';
import type { GenerateRequest } from '../spec/inference-engine.js';
import type { FeedbackRecord, TurnRecord } from '../spec/records.js';
import type { RememberResult } from '../spec/user-memory.js';
import type { GatewayContext } from './gateway-context.js';

/**
 * The request as the engine gets it: with the user's memory at the end of the first system
 * message when the mode serves memory and the request has a user; otherwise the request itself.
 */
export async function servedWithMemory(context: Pick<GatewayContext, 'store' | 'userMemory'>, user: string | null, request: GenerateRequest): Promise<GenerateRequest> {
  const settings = context.userMemory;
  if (settings === undefined || !servesMemory(settings.mode) || user === null) return request;
  const block = memoryBlockOf(await context.store.listMemory(user), settings.maximumTokens);
  return block === null ? request : { ...request, messages: withUserMemory(request.messages, block) };
}

/**
 * Adds what explicit feedback said to the memory of the turn's user: its hint (kind `hint`), else
 * its text (kind `feedback`), as the store kept it (redacted), shortened. Scores alone, a rollout's
 * rewards and a turn without a user add nothing; null when nothing was added.
 */
export async function rememberFeedback(context: Pick<GatewayContext, 'store' | 'userMemory' | 'now'>, turn: TurnRecord, feedback: FeedbackRecord): Promise<RememberResult | null> {
  const settings = context.userMemory;
  if (settings === undefined || settings.mode === 'off' || turn.user === null || feedback.rollout != null) return null;
  const hint = feedback.hint === null ? null : memoryEntryTextOf(feedback.hint);
  const text = hint ?? (feedback.text === null ? null : memoryEntryTextOf(feedback.text));
  if (text === null) return null;
  return context.store.remember({ user: turn.user, kind: hint === null ? 'feedback' : 'hint', text, sourceTurnId: turn.id, at: context.now() }, settings.maximumEntries);
}
