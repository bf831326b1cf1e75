import { describe, expect, it } from 'vitest';
import { builtinUsers, satisfiesPreference } from '../../core/user-preference.js';
import { createSeededRandom } from '../../core/seeded-random.js';
import { createExperimentPlan, userReply } from './experiment-plan.js';

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

describe('userReply', () => {
  it("complains about the rule the response breaks when the rule has complaints of its own", () => {
    const user = { ...builtinUsers.student, preference: { ...builtinUsers.student.preference, rules: builtinUsers.student.preference.rules.map((rule, index) => ({ ...rule, complaints: [`rule ${index}`] })) } };
    const random = createSeededRandom(2);
    expect(userReply(user, 'The answer is **12**.', random).text).toBe('rule 0');
    expect(userReply(user, 'Tom has 12 apples, so \\boxed{12}.', random).text).toBe('rule 2');
    expect(userReply(user, 'Tom has 12 apples, so 12.', random)).toEqual({ satisfied: true, text: expect.any(String) });
  });

  it('complains about a response that breaks the preference and thanks for one that keeps it', () => {
    const user = builtinUsers.student;
    const random = createSeededRandom(1);
    const bold = 'The answer is **12**.';
    const plain = 'Tom has 12 apples, so the answer is 12.';
    expect(satisfiesPreference(user.preference, plain)).toBe(true);
    const complaint = userReply(user, bold, random);
    expect(complaint.satisfied).toBe(false);
    expect(user.complaints).toContain(complaint.text);
    const thanks = userReply(user, plain, random);
    expect(thanks.satisfied).toBe(true);
    expect(user.thanks).toContain(thanks.text);
  });
});
