import { describe, expect, it } from 'vitest';
import { builtinUsers, satisfiesPreference } from '../../builtin/user-preference.js';
import { createSeededRandom } from '../../core/seeded-random.js';
import { incoherenceComplaints } from '../../builtin/reply-coherence.js';
import { answeringText, createExperimentPlan, probeSatisfied, userReply } from './experiment-plan.js';

describe('createExperimentPlan', () => {
  it('draws distinct probe messages that no session starts with, and one or two follow-ups per session', () => {
    const plan = createExperimentPlan({ user: builtinUsers.ta, seed: 3, sessions: 40, probeSize: 50 });
    expect(plan.probeMessages).toHaveLength(50);
    expect(new Set(plan.probeMessages).size).toBe(50);
    expect(plan.sessions.map((session) => session.index)).toEqual(Array.from({ length: 40 }, (_, index) => index + 1));
    const probe = new Set(plan.probeMessages);
    expect(plan.sessions.filter((session) => probe.has(session.firstMessage))).toEqual([]);
    expect(new Set(plan.sessions.map((session) => session.followUps))).toEqual(new Set([1, 2]));
  });

  it('is the same for the same seed, and the probe does not depend on the session count', () => {
    const short = createExperimentPlan({ user: builtinUsers.student, seed: 9, sessions: 3, probeSize: 50 });
    const long = createExperimentPlan({ user: builtinUsers.student, seed: 9, sessions: 30, probeSize: 50 });
    expect(long.probeMessages).toEqual(short.probeMessages);
    expect(long.sessions.slice(0, 3).map((session) => [session.firstMessage, session.followUps])).toEqual(
      short.sessions.map((session) => [session.firstMessage, session.followUps]),
    );
    const other = createExperimentPlan({ user: builtinUsers.student, seed: 10, sessions: 3, probeSize: 50 });
    expect(other.probeMessages).not.toEqual(short.probeMessages);
  });

  it('never reveals the preference in a first message', () => {
    const plan = createExperimentPlan({ user: builtinUsers.student, seed: 1, sessions: 20, probeSize: 50 });
    for (const message of [...plan.probeMessages, ...plan.sessions.map((session) => session.firstMessage)]) {
      expect(message).not.toMatch(/hint \/ instruction|bold|numbered/i);
    }
  });

  it('rejects sizes that are not positive integers', () => {
    expect(() => createExperimentPlan({ user: builtinUsers.student, seed: 1, sessions: 0, probeSize: 50 })).toThrow(/--sessions/);
    expect(() => createExperimentPlan({ user: builtinUsers.student, seed: 1, sessions: 2, probeSize: 1.5 })).toThrow(/probe size/);
  });
});

const question = 'Tom has 7 apples and buys 5 more. How many apples does Tom have?';
const answer = (text: string, finishReason: string | null = 'stop') => ({ text, finishReason, answering: question });

describe('userReply', () => {
  it("complains about the rule the response breaks when the rule has complaints of its own", () => {
    const user = { ...builtinUsers.student, preference: { ...builtinUsers.student.preference, rules: builtinUsers.student.preference.rules.map((rule, index) => ({ ...rule, complaints: [`rule ${index}`] })) } };
    const random = createSeededRandom(2);
    expect(userReply(user, answer('Tom has **12** apples.'), random).text).toBe('rule 0');
    expect(userReply(user, answer('Tom has 12 apples, so \\boxed{12}.'), random).text).toBe('rule 2');
    expect(userReply(user, answer('Tom has 12 apples, so 12.'), random)).toEqual({ satisfied: true, text: expect.any(String), incoherence: null });
  });

  it('complains about a response that breaks the preference and thanks for one that keeps it', () => {
    const user = builtinUsers.student;
    const random = createSeededRandom(1);
    const bold = 'Tom has **12** apples.';
    const plain = 'Tom has 12 apples, so the answer is 12.';
    expect(satisfiesPreference(user.preference, plain)).toBe(true);
    const complaint = userReply(user, answer(bold), random);
    expect(complaint.satisfied).toBe(false);
    expect(user.complaints).toContain(complaint.text);
    const thanks = userReply(user, answer(plain), random);
    expect(thanks.satisfied).toBe(true);
    expect(user.thanks).toContain(thanks.text);
  });
});

describe('an incoherent response', () => {
  it('draws a complaint about what makes it unusable, whatever its style, and never satisfies the probe', () => {
    const user = builtinUsers.student;
    const plain = 'Tom has 12 apples, so the answer is 12.';
    for (const [response, incoherence] of [
      [answer(plain, 'length'), 'cut-off'],
      [answer('12,,,,,,,,,,,,,,,,'), 'repetition'],
      [answer('The answer is is is 12.'), 'repetition'],
      [answer('Mia has 3 cookies.'), 'off-task'],
    ] as const) {
      const reply = userReply(user, response, createSeededRandom(3));
      expect(reply).toEqual({ satisfied: false, text: expect.any(String), incoherence });
      expect(incoherenceComplaints[incoherence]).toContain(reply.text);
      expect(probeSatisfied(user, response)).toEqual({ satisfied: false, incoherence });
    }
    expect(probeSatisfied(user, answer(plain))).toEqual({ satisfied: true, incoherence: null });
  });
});

describe('a follow-up response', () => {
  const conversation = [
    { role: 'user', content: question },
    { role: 'assistant', content: 'Tom has **12** apples.' },
    { role: 'user', content: 'Way too formatted, it has to look like my own homework.' },
  ];

  it('is on the question when it solves the task again, though it shares no word with the complaint it answers', () => {
    const retry = 'Tom starts with 7 and gets 5 more, so he has 12 now.';
    expect(answeringText(conversation)).toBe(`${question}\nWay too formatted, it has to look like my own homework.`);
    expect(probeSatisfied(builtinUsers.student, { text: retry, finishReason: 'stop', answering: answeringText(conversation) })).toEqual({ satisfied: true, incoherence: null });
    // Judged against the complaint alone, the same retry was called off the question.
    expect(probeSatisfied(builtinUsers.student, { text: retry, finishReason: 'stop', answering: conversation[2]?.content ?? '' }).incoherence).toBe('off-task');
  });

  it('is off the question when it shares nothing with any of the user messages', () => {
    expect(probeSatisfied(builtinUsers.student, { text: 'Mia has 3 cookies.', finishReason: 'stop', answering: answeringText(conversation) }).incoherence).toBe('off-task');
  });
});
