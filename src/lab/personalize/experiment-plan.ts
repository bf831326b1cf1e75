/**
 * What the simulated user will say, fixed in advance from the seed: the first message of every
 * session (a held-out task of the user's kind that never mentions the preference), how many
 * follow-up turns each session has, and the held-out probe set. The probe and the sessions never
 * share a message, so the probe measures what the policy learned, not what it saw.
 */
import { createSeededRandom, deriveSeed, type SeededRandom } from '../../core/seeded-random.js';
import { incoherenceComplaints, replyIncoherence, type ReplyIncoherence } from '../../builtin/reply-coherence.js';
import { complaintsFor, type SimulatedUser } from '../../builtin/user-preference.js';
import { firstMessages } from '../corpus/corpus-generator.js';
import { ClawrlError } from '../../spec/clawrl-error.js';

export interface PlannedSession {
  /** 1-based. */
  index: number;
  firstMessage: string;
  /** User replies after the first response: one or two. */
  followUps: number;
  /** Draws the user's complaint or thanks phrasings; one stream per session so a session replays alone. */
  random: SeededRandom;
}

export interface ExperimentPlan {
  sessions: PlannedSession[];
  probeMessages: string[];
}

export interface ExperimentPlanOptions {
  user: SimulatedUser;
  seed: number;
  sessions: number;
  probeSize: number;
}

/** Distinct messages from a seeded stream, skipping any in `excluded`; gives up if the generator keeps repeating. */
function distinctMessages(options: { user: SimulatedUser; seed: number; count: number; excluded: ReadonlySet<string> }): string[] {
  const chosen: string[] = [];
  const seen = new Set(options.excluded);
  let requested = 0;
  let examined = 0;
  while (chosen.length < options.count) {
    requested = Math.max(requested * 2, options.count + 8);
    if (requested > options.count * 20 + 1000) {
      throw new ClawrlError('configuration_error', `Cannot draw ${options.count} distinct ${options.user.task} messages from the held-out split.`);
    }
    // firstMessages extends a shorter list, so only the messages past `examined` are new.
    const list = firstMessages({ task: options.user.task, seed: options.seed, count: requested });
    for (; examined < list.length && chosen.length < options.count; examined += 1) {
      const message = list[examined] as string;
      if (seen.has(message)) continue;
      seen.add(message);
      chosen.push(message);
    }
  }
  return chosen;
}

export function createExperimentPlan(options: ExperimentPlanOptions): ExperimentPlan {
  if (!Number.isInteger(options.sessions) || options.sessions < 1) {
    throw new ClawrlError('configuration_error', `--sessions must be a positive integer, got ${options.sessions}.`, { param: 'sessions' });
  }
  if (!Number.isInteger(options.probeSize) || options.probeSize < 1) {
    throw new ClawrlError('configuration_error', `The probe size must be a positive integer, got ${options.probeSize}.`, { param: 'probeSize' });
  }
  const probeMessages = distinctMessages({
    user: options.user,
    seed: deriveSeed(options.seed, 'personalize', 'probe'),
    count: options.probeSize,
    excluded: new Set(),
  });
  const firsts = distinctMessages({
    user: options.user,
    seed: deriveSeed(options.seed, 'personalize', 'sessions'),
    count: options.sessions,
    excluded: new Set(probeMessages),
  });
  const sessions = firsts.map((firstMessage, offset) => {
    const random = createSeededRandom(deriveSeed(options.seed, 'personalize', 'session', offset + 1));
    return { index: offset + 1, firstMessage, followUps: random.integer(1, 2), random };
  });
  return { sessions, probeMessages };
}

/** A response as the user sees it, and the message of theirs it answers. */
export interface UserFacingResponse {
  text: string;
  finishReason: string | null;
  /** What the response answers, as `answeringText` gives it: an off-task check reads it. */
  answering: string;
}

/**
 * What a response in a conversation answers: every user message so far, the task first. Not the last
 * one alone: a reply to "Way too formatted, it has to look like my own homework." that solves the task
 * again shares its numbers and names with the task, not a word with the complaint; judged against the
 * complaint alone, every such follow-up would be called off the question.
 */
export function answeringText(messages: readonly { role: string; content: unknown }[]): string {
  return messages.flatMap((message) => (message.role === 'user' && typeof message.content === 'string' ? [message.content] : [])).join('\n');
}

export interface UserReply {
  satisfied: boolean;
  text: string;
  /** Set when the response failed before its style was looked at (`core/reply-coherence.ts`). */
  incoherence: ReplyIncoherence | null;
}

/**
 * What the user holds against a response: complaints about what makes it unusable (cut off, repeating
 * itself, off the question), else about what it breaks of the preference (complaintsFor); none when
 * it satisfies them. Sessions and the probe both judge through it, so they cannot disagree.
 */
export function userComplaints(user: SimulatedUser, response: UserFacingResponse): { complaints: readonly string[]; incoherence: ReplyIncoherence | null } {
  const incoherence = replyIncoherence(response, response.answering);
  return { complaints: incoherence === null ? complaintsFor(user, response.text) : incoherenceComplaints[incoherence], incoherence };
}

/** The user's answer to a response: one of its complaints, else thanks. One draw of `random` either way. */
export function userReply(user: SimulatedUser, response: UserFacingResponse, random: SeededRandom): UserReply {
  const { complaints, incoherence } = userComplaints(user, response);
  const satisfied = complaints.length === 0;
  return { satisfied, text: random.pick(satisfied ? user.thanks : complaints), incoherence };
}

/** Whether a probe response satisfies the user: coherent, and every rule of the preference holds. */
export function probeSatisfied(user: SimulatedUser, response: UserFacingResponse): { satisfied: boolean; incoherence: ReplyIncoherence | null } {
  const { complaints, incoherence } = userComplaints(user, response);
  return { satisfied: complaints.length === 0, incoherence };
}
