/**
 * Each user's memory in the judge (`--user-memory`, `docs/memory.md`): a hint the judge accepted
 * for a user's turn joins that user's memory, and with `teacher` or `both` the OPD teacher reads the
 * user's memory beside the hint — the served prompt stays as it was, so the student learns to act
 * as if it remembered (OpenClaw-RL's experience distillation).
 */
import { memoryBlockOf, teachesMemory, withUserMemory, type UserMemoryMode } from '../core/user-memory-context.js';
import { memoryEntryTextOf } from '../core/user-memory-text.js';
import type { ChatMessage } from '../spec/chat.js';
import type { TurnRecord } from '../spec/records.js';
import type { UserMemory } from '../spec/user-memory.js';

export interface JudgeMemory {
  store: Pick<UserMemory, 'remember' | 'listMemory'>;
  mode: UserMemoryMode;
  /** Entries kept per user (`--user-memory-entries`). */
  maximumEntries: number;
  /** Estimated tokens of memory in the teacher's context (`--user-memory-tokens`). */
  maximumTokens: number;
}

/**
 * The messages the OPD teacher is conditioned on before the hint is appended: the turn's own, with
 * the user's memory as it is now when the mode teaches it (replacing the block a served prompt held).
 * The turn's own entries are left out: its hint is appended already.
 */
export async function teacherMessagesOf(turn: TurnRecord, memory: JudgeMemory | undefined): Promise<ChatMessage[]> {
  if (memory === undefined || !teachesMemory(memory.mode) || turn.user === null) return turn.messages;
  const entries = (await memory.store.listMemory(turn.user)).filter((entry) => entry.sourceTurnId !== turn.id);
  return withUserMemory(turn.messages, memoryBlockOf(entries, memory.maximumTokens));
}

/** Adds the hint the judge accepted for a user's turn to that user's memory (unless the mode is off). */
export async function rememberJudgedHint(turn: TurnRecord, hint: string | null, memory: JudgeMemory | undefined, at: number): Promise<void> {
  if (memory === undefined || memory.mode === 'off' || turn.user === null || hint === null) return;
  const text = memoryEntryTextOf(hint);
  if (text === null) return;
  await memory.store.remember({ user: turn.user, kind: 'hint', text, sourceTurnId: turn.id, at }, memory.maximumEntries);
}
