/**
 * Simulated users for the personalization experiment (`clawrl eval personalize --user`): the
 * file format of the design brief §3 as a zod schema, the pure check of a reply against a
 * preference, and the three built-in users of the OpenClaw-RL paper (student, ta, teacher). A
 * preference's rules are the rules of `--judge rules` (`src/judge/text-rule.ts`).
 */
import { z } from 'zod';
import type { RulesJudgeSpec } from '../judge/create-rules-judge.js';
import { regexRuleSchema, ruleHolds, wordCountRuleSchema } from '../judge/text-rule.js';
import { boldPattern, boxedPattern, numberedLinePattern, warmPhrases } from './style.js';

/**
 * What the user says when this rule is broken (an extension of the brief's format): a user names
 * what it sees, so a reply whose only fault is its box draws a complaint about the box, not one
 * about the bold text it does not have. Rules without it fall back to the user's `complaints`.
 */
const ruleComplaints = { complaints: z.array(z.string().min(1)).min(1).optional() };

/** A rule of `--judge rules` (`src/judge/text-rule.ts`) with the complaints the user makes when it is broken. */
export const preferenceRuleSchema = z.union([regexRuleSchema.safeExtend(ruleComplaints), wordCountRuleSchema.extend(ruleComplaints)]);

export const preferenceSchema = z.object({
  description: z.string().min(1),
  rules: z.array(preferenceRuleSchema).min(1),
});

export const userTaskValues = ['solve', 'grade', 'comment'] as const;

export const simulatedUserSchema = z.object({
  name: z.string().min(1),
  task: z.enum(userTaskValues),
  preference: preferenceSchema,
  complaints: z.array(z.string().min(1)).min(1),
  thanks: z.array(z.string().min(1)).min(1),
  hint: z.string().min(1),
});

export type PreferenceRule = z.infer<typeof preferenceRuleSchema>;
export type Preference = z.infer<typeof preferenceSchema>;
export type UserTask = (typeof userTaskValues)[number];
export type SimulatedUser = z.infer<typeof simulatedUserSchema>;

export type SimulatedUserParseResult = { ok: true; user: SimulatedUser } | { ok: false; issues: string[] };

/** Validates a parsed user file; problems come back as readable `path: message` lines. */
export function parseSimulatedUser(input: unknown): SimulatedUserParseResult {
  const parsed = simulatedUserSchema.safeParse(input);
  if (parsed.success) return { ok: true, user: parsed.data };
  return {
    ok: false,
    issues: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
  };
}

/**
 * The complaints a user may answer `text` with: those of the rules it breaks that have their own,
 * else the user's general ones. Empty when the preference is satisfied.
 */
export function complaintsFor(user: SimulatedUser, text: string): readonly string[] {
  const broken = brokenRules(user.preference, text);
  if (broken.length === 0) return [];
  const own = broken.flatMap((index) => user.preference.rules[index]?.complaints ?? []);
  return own.length > 0 ? own : user.complaints;
}

/** Every complaint a user can make, general and per rule. */
export function allComplaints(user: SimulatedUser): string[] {
  return [...user.complaints, ...user.preference.rules.flatMap((rule) => rule.complaints ?? [])];
}

/** Indexes of the rules `text` breaks (empty when the preference is satisfied). */
export function brokenRules(preference: Preference, text: string): number[] {
  return preference.rules.flatMap((rule, index) => (ruleHolds(rule, text) ? [] : [index]));
}

/** A reply satisfies a preference when every rule holds. */
export function satisfiesPreference(preference: Preference, text: string): boolean {
  return preference.rules.every((rule) => ruleHolds(rule, text));
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export const builtinUserNames = ['student', 'ta', 'teacher'] as const;
export type BuiltinUserName = (typeof builtinUserNames)[number];

/**
 * The paper's three users. Their complaints and thanks are worded apart from the judge corpus's
 * phrase lists, so the built-in judge meets them unseen, as it would a real user.
 */
export const builtinUsers: { readonly [N in BuiltinUserName]: SimulatedUser } = {
  student: {
    name: 'student',
    task: 'solve',
    preference: {
      description: 'Homework that looks hand-written: no bold text, no numbered lists, no \\boxed{} answers.',
      rules: [
        { type: 'regex', pattern: boldPattern.source, expect: false },
        { type: 'regex', pattern: numberedLinePattern.source, flags: 'm', expect: false },
        { type: 'regex', pattern: boxedPattern.source, expect: false },
      ],
    },
    complaints: [
      'This looks like an AI wrote it, all that bold and numbering.',
      "My teacher will know I didn't write this. Nobody boxes their answer or numbers every step.",
      'Can you make it sound like a normal kid wrote it? No fancy stars, lists or boxes.',
      'Way too formatted, it has to look like my own homework.',
    ],
    thanks: ['Perfect, that looks like something I would write. Thanks!', "Nice, my teacher won't suspect a thing."],
    hint: "Please don't use bold text or numbered lists. State the final answer in a normal sentence.",
  },
  ta: {
    name: 'ta',
    task: 'grade',
    preference: {
      description: 'Specific, detailed grading comments of at least 100 words.',
      rules: [{ type: 'minWords', value: 100 }],
    },
    complaints: [
      "That's too thin for grading. What exactly did the student get right or wrong?",
      "I can't hand this back, it barely says anything. I need a full explanation.",
      'Students need much more feedback than this, go through their work properly.',
    ],
    thanks: ["Great, that's the level of detail I need.", 'Thanks, this is thorough enough to hand back.'],
    hint: 'Write at least 100 words.',
  },
  teacher: {
    name: 'teacher',
    task: 'comment',
    preference: {
      description: 'Friendly, patient comments with warm phrases such as "well done!" or "excellent!".',
      rules: [{ type: 'regex', pattern: warmPhrases.map(escapeRegex).join('|'), flags: 'i', expect: true }],
    },
    complaints: [
      'This sounds so cold. My students are kids, they need to feel good about trying.',
      'Too dry, the student will be discouraged reading this.',
      'Could you sound a lot more encouraging? This reads like a rejection letter.',
    ],
    thanks: ['Lovely, the student will be happy to read this.', "That's the tone I want, thank you."],
    hint: 'Be warm and encouraging.',
  },
};

/** `--judge rules user:<name>`: +1 for a reply the user's preference accepts, −1 with the user's hint otherwise. */
export function rulesJudgeSpecForUser(user: SimulatedUser): RulesJudgeSpec {
  return {
    name: `user-${user.name}`,
    rules: [
      { when: user.preference.rules.map((rule) => ({ on: 'response' as const, rule })), score: 1 },
      { when: [], score: -1, hint: user.hint },
    ],
  };
}
