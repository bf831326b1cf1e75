import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { incoherenceComplaints } from '../../builtin/reply-coherence.js';
import { builtinUsers } from '../../builtin/user-preference.js';
import type { CompletionRequest, CompletionResult, PersonalizeClient } from './personalize-client.js';
import { personalizeResultSchema } from './personalize-result.js';
import { runPersonalizeExperiment, type PersonalizeProgress } from './run-personalize-experiment.js';

/**
 * An in-process stand-in for the server's HTTP surface: the version it serves is a function of
 * how many requests it has answered, and version 0 writes bold answers (which the student
 * dislikes) while later versions write plain ones.
 */
type Write = (policyVersion: number, question: string) => { content: string; finishReason: string };
// Quoting the question keeps the reply on it (core/reply-coherence.ts).
const boldThenPlain: Write = (policyVersion, question) => ({ content: policyVersion === 0 ? `The answer to "${question}" is **12**.` : `The answer to "${question}" is 12.`, finishReason: 'stop' });

function scriptedClient(versionAt: (requestsSoFar: number) => number, activeVersion: () => number | null = () => null, write: Write = boldThenPlain) {
  const requests: CompletionRequest[] = [];
  const feedback: { turnId: string; text: string }[] = [];
  const client: PersonalizeClient = {
    modelName: async () => 'scripted',
    async complete(request): Promise<CompletionResult> {
      const policyVersion = versionAt(requests.length);
      requests.push({ ...request, messages: request.messages.map((message) => ({ ...message })) });
      const question = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
      return { ...write(policyVersion, question), policyVersion, turnId: `turn-${requests.length}` };
    },
    activePolicyVersion: async () => activeVersion(),
    turnJudging: async () => ({ judge: { judge: 'rules', judgeModel: 'rules:default' }, sampleMethod: 'rl', sampling: { temperature: 0.7, topP: 0.95 } }),
    backlog: async () => null,
    sendFeedback: async (sent) => {
      feedback.push(sent);
    },
  };
  return { client, requests, feedback };
}

describe('runPersonalizeExperiment', () => {
  it('probes the base and every new version, and drives sessions as an agent would', async () => {
    const probeSize = 5;
    // Version 1 is served from the 12th request on: after the base probe (5) and a few session turns.
    const { client, requests } = scriptedClient((count) => (count >= 12 ? 1 : 0));
    const progress: PersonalizeProgress[] = [];
    const result = await runPersonalizeExperiment({
      client,
      user: builtinUsers.student,
      method: 'rl',
      seed: 4,
      sessions: 6,
      probeSize,
      runId: 'run',
      onProgress: (event) => progress.push(event),
    });
    expect(personalizeResultSchema.parse(result)).toEqual(result);
    expect(result.baseProbeRate).toBe(0);
    expect(result.probe.map((entry) => [entry.policyVersion, entry.satisfactionRate])).toEqual([
      [0, 0],
      [1, 1],
    ]);
    const switchSession = result.probe[1]?.afterSession ?? -1;
    expect(result.sessionsToSuccess).toBe(switchSession);
    expect(result.sessions.filter((session) => session.index > switchSession).every((session) => session.firstResponseSatisfied)).toBe(true);
    expect(result.judge).toEqual({ judge: 'rules', judgeModel: 'rules:default' });
    expect(result.serverMethod).toBe('rl');
    expect(result.sampling).toEqual({ temperature: 0.7, topP: 0.95 });

    const probeRequests = requests.filter((request) => request.turnType === 'side');
    expect(probeRequests).toHaveLength(probeSize * 2);
    expect(probeRequests.every((request) => request.messages.length === 1)).toBe(true);
    const mainRequests = requests.filter((request) => request.turnType === 'main');
    expect(mainRequests.length).toBe(result.sessions.reduce((sum, session) => sum + session.turnIds.length, 0));
    for (const session of result.sessions) {
      const own = mainRequests.filter((request) => request.sessionId === session.sessionId);
      expect(own.map((request) => request.sessionDone)).toEqual(own.map((_, index) => index === own.length - 1));
      expect([2, 3]).toContain(own.length);
      const reply = own[1]?.messages[2]?.content ?? '';
      expect(session.firstResponseSatisfied ? builtinUsers.student.thanks : builtinUsers.student.complaints).toContain(reply);
    }
    expect(progress.filter((event) => event.kind === 'session')).toHaveLength(6);

    // Seeded sampling: a probe message keeps its seed from version to version, session turns differ.
    const probeSeeds = (afterSession: number) => probeRequests.filter((request) => request.sessionId.startsWith(`run-probe-${afterSession}-`)).map((request) => request.seed);
    expect(probeSeeds(switchSession)).toEqual(probeSeeds(0));
    expect(new Set(probeSeeds(0)).size).toBe(probeSize);
    const sessionSeeds = mainRequests.map((request) => request.seed);
    expect(sessionSeeds.every((seed) => Number.isInteger(seed) && seed! >= 0 && seed! < 2 ** 31)).toBe(true);
    expect(new Set(sessionSeeds).size).toBe(sessionSeeds.length);
  });

  it('never counts a collapsed version as satisfying, however well its style matches, and says so to the server', async () => {
    // Version 1 has collapsed: no bold, no lists, no box, so the student's rules alone would be met.
    const collapsed: Write = (policyVersion, question) => (policyVersion === 0 ? boldThenPlain(0, question) : { content: '1111111111111111111111111', finishReason: 'length' });
    const { client, requests } = scriptedClient((count) => (count >= 12 ? 1 : 0), () => null, collapsed);
    const result = await runPersonalizeExperiment({ client, user: builtinUsers.student, method: 'rl', seed: 4, sessions: 6, probeSize: 5, runId: 'run' });
    expect(result.probe.map((entry) => [entry.policyVersion, entry.satisfactionRate, entry.incoherent])).toEqual([
      [0, 0, 0],
      [1, 0, 5],
    ]);
    expect(result.sessionsToSuccess).toBeNull();
    const lastSession = requests.filter((request) => request.sessionId === result.sessions.at(-1)?.sessionId);
    expect(incoherenceComplaints['cut-off']).toContain(lastSession[1]?.messages[2]?.content);
  });

  it("sends the reply to each session's last response as feedback text with finalFeedback, and nothing without it", async () => {
    const options = { user: builtinUsers.student, method: 'combine' as const, seed: 4, sessions: 4, probeSize: 2, runId: 'run' };
    const without = scriptedClient(() => 0);
    expect((await runPersonalizeExperiment({ ...options, client: without.client })).finalFeedback).toBe(false);
    expect(without.feedback).toEqual([]);

    // Version 0 writes bold answers (complaints), later versions plain ones (thanks).
    const { client, requests, feedback } = scriptedClient((count) => (count >= 9 ? 1 : 0));
    const result = await runPersonalizeExperiment({ ...options, client, finalFeedback: true });
    expect(result.finalFeedback).toBe(true);
    expect(feedback.map((sent) => sent.turnId)).toEqual(result.sessions.map((session) => session.turnIds.at(-1)));
    const replies = builtinUsers.student;
    for (const sent of feedback) {
      // turn-N answered the N-th request, whose version was (N - 1 >= 9 ? 1 : 0).
      const servedPlain = Number(sent.turnId.replace('turn-', '')) - 1 >= 9;
      expect(servedPlain ? replies.thanks : replies.complaints).toContain(sent.text);
    }
    expect(new Set(feedback.map((sent) => replies.thanks.includes(sent.text))).size).toBe(2);
    // The replies drawn for the sessions are the same with or without it.
    const mainMessages = (list: CompletionRequest[]) => list.filter((request) => request.turnType === 'main').map((request) => request.messages.length);
    expect(mainMessages(requests)).toEqual(mainMessages(without.requests));
  });

  it('ends a session whose follow-up no longer fits the context, and fails on a first message that does not', async () => {
    const contextFull = () =>
      OpenAI.APIError.generate(400, { error: { message: 'too long', type: 'invalid_request_error', code: 'context_length_exceeded' } }, 'too long', new Headers());
    const { client, requests } = scriptedClient(() => 0);
    const overflowing: PersonalizeClient = {
      ...client,
      async complete(request) {
        if (request.turnType === 'main' && request.messages.length > 1) {
          requests.push(request);
          throw contextFull();
        }
        return client.complete(request);
      },
    };
    const options = { user: builtinUsers.student, method: 'rl' as const, seed: 4, sessions: 3, probeSize: 2, runId: 'run' };
    const result = await runPersonalizeExperiment({ ...options, client: overflowing });
    expect(result.sessions.map((session) => [session.turnIds.length, session.endedEarly])).toEqual(Array(3).fill([1, 'context-full']));
    expect(personalizeResultSchema.parse(result)).toEqual(result);

    // The reply that no follow-up could carry goes as feedback on the session's only turn.
    const fed = scriptedClient(() => 0);
    const overflowingFed: PersonalizeClient = { ...fed.client, complete: overflowing.complete };
    const fedResult = await runPersonalizeExperiment({ ...options, client: overflowingFed, finalFeedback: true, runId: 'fed' });
    expect(fed.feedback.map((sent) => sent.turnId)).toEqual(fedResult.sessions.map((session) => session.turnIds[0]));
    expect(fed.feedback.every((sent) => builtinUsers.student.complaints.includes(sent.text))).toBe(true);

    const refusing: PersonalizeClient = {
      ...client,
      complete: async (request) => (request.turnType === 'main' ? Promise.reject(contextFull()) : client.complete(request)),
    };
    await expect(runPersonalizeExperiment({ ...options, client: refusing })).rejects.toThrow(/too long/);
  });

  it('repeats a probe whose responses came from two versions, for the newer one', async () => {
    // The version changes in the middle of the base probe.
    const { client, requests } = scriptedClient((count) => (count >= 2 ? 1 : 0));
    const result = await runPersonalizeExperiment({ client, user: builtinUsers.student, method: 'combine', seed: 1, sessions: 1, probeSize: 4, runId: 'run' });
    expect(result.probe).toEqual([{ policyVersion: 1, afterSession: 0, satisfactionRate: 1, satisfied: 4, incoherent: 0, size: 4, mixedVersions: false }]);
    expect(new Set(requests.filter((request) => request.turnType === 'side').map((request) => request.sessionId)).size).toBe(2);
    expect(result.sessionsToSuccess).toBe(0);
  });

  it('detects a new version through the admin view before any response shows it', async () => {
    let active = 0;
    const { client } = scriptedClient(() => active, () => active);
    const result = await runPersonalizeExperiment({
      client,
      user: builtinUsers.student,
      method: 'opd',
      seed: 2,
      sessions: 3,
      probeSize: 3,
      runId: 'run',
      onProgress: (event) => {
        if (event.kind === 'session' && event.session.index === 2) active = 1;
      },
    });
    // Activated once the second session reported; the probe after the third finds it.
    expect(result.probe.map((entry) => [entry.afterSession, entry.policyVersion])).toEqual([
      [0, 0],
      [3, 1],
    ]);
    expect(result.consecutiveCriterion).toBeNull();
  });

  it('waits after each session until the server has judged it and trained on what is due', async () => {
    // The server finishes its backlog on the third check after each session, and serves the new
    // version only once it has: without the wait, every session would be answered by version 0.
    let version = 0;
    let checks = 0;
    const { client } = scriptedClient(() => version, () => version);
    client.backlog = async () => {
      checks += 1;
      if (checks % 3 !== 0) return { judgingPending: 1, trainingDue: checks % 3 === 2 };
      version += 1;
      return { judgingPending: 0, trainingDue: false };
    };
    const result = await runPersonalizeExperiment({ client, user: builtinUsers.student, method: 'rl', seed: 3, sessions: 2, probeSize: 2, runId: 'run', waitPollMs: 1 });
    expect(checks).toBe(6);
    expect(result.sessions.map((session) => session.policyVersion)).toEqual([0, 1]);
    expect(result.probe.map((entry) => entry.policyVersion)).toEqual([0, 1, 2]);
    expect(result.stoppedWaiting).toBeNull();
  });

  it('says so and stops waiting when the server has no admin view or does not catch up', async () => {
    const { client } = scriptedClient(() => 0);
    const progress: PersonalizeProgress[] = [];
    const blind = await runPersonalizeExperiment({ client, user: builtinUsers.student, method: 'rl', seed: 3, sessions: 2, probeSize: 2, runId: 'run', onProgress: (event) => progress.push(event) });
    expect(progress.filter((event) => event.kind === 'wait').map((event) => event.kind === 'wait' && event.outcome)).toEqual(['no-admin']);
    expect(blind.stoppedWaiting).toEqual({ afterSession: 1, reason: 'no-admin' });

    let checks = 0;
    client.backlog = async () => {
      checks += 1;
      return { judgingPending: 2, trainingDue: false };
    };
    const slow: PersonalizeProgress[] = [];
    const impatient = await runPersonalizeExperiment({
      client, user: builtinUsers.student, method: 'rl', seed: 3, sessions: 3, probeSize: 2, runId: 'run2', maxWaitMs: 20, waitPollMs: 5, onProgress: (event) => slow.push(event),
    });
    expect(slow.filter((event) => event.kind === 'wait').map((event) => event.kind === 'wait' && event.outcome)).toEqual(['timed-out']);
    expect(impatient.stoppedWaiting).toEqual({ afterSession: 1, reason: 'timed-out' });
    expect(personalizeResultSchema.parse(impatient)).toEqual(impatient);
    expect(checks).toBeLessThan(10);
  });
});
