import { describe, expect, it } from 'vitest';
import { pickUserToTrain, readySamplesOverQuota, trainingActivityOf, type UserTrainingCandidate } from './pick-user-to-train.js';

const hour = 60 * 60 * 1000;
const candidate = (user: string | null, ready: number, lastTrainedAt: number | null = null, stepsToday = 0): UserTrainingCandidate => ({ user, ready, lastTrainedAt, stepsToday });
const options = { minimumReady: 16, stepsPerDay: 48 };

describe('pickUserToTrain', () => {
  it('trains the user trained least recently among those with enough ready samples, a never-trained one first', () => {
    const picked = pickUserToTrain([candidate('acme/busy', 500, 9 * hour), candidate('acme/quiet', 16, 2 * hour), candidate('acme/new', 20)], options);
    expect(picked?.user).toBe('acme/new');
    expect(pickUserToTrain([candidate('acme/busy', 500, 9 * hour), candidate('acme/quiet', 16, 2 * hour)], options)?.user).toBe('acme/quiet');
  });

  it('skips users below the step size and users out of steps today; null when nobody qualifies', () => {
    expect(pickUserToTrain([candidate('acme/few', 15), candidate('acme/spent', 100, 1, 48), candidate('acme/ok', 16, 5, 47)], options)?.user).toBe('acme/ok');
    expect(pickUserToTrain([candidate('acme/few', 15), candidate('acme/spent', 100, 1, 48)], options)).toBeNull();
    expect(pickUserToTrain([], options)).toBeNull();
  });

  it('breaks ties by name, the global lineage (null) first, and never picks a lineage with nothing ready', () => {
    expect(pickUserToTrain([candidate('acme/b', 3), candidate('acme/a', 3), candidate(null, 3)], { minimumReady: 1, stepsPerDay: 1 })?.user).toBeNull();
    expect(pickUserToTrain([candidate('acme/b', 3), candidate('acme/a', 3)], { minimumReady: 1, stepsPerDay: 1 })?.user).toBe('acme/a');
    expect(pickUserToTrain([candidate('acme/a', 0)], { minimumReady: 0, stepsPerDay: 1 })).toBeNull();
  });

  it('lets users take turns: a busy user steps once per round however much it sends', () => {
    const lineages = new Map<string, UserTrainingCandidate>([
      ['acme/busy', candidate('acme/busy', 1_000)],
      ['acme/a', candidate('acme/a', 32)],
      ['acme/b', candidate('acme/b', 32)],
    ]);
    const order: string[] = [];
    for (let round = 1; round <= 6; round += 1) {
      const picked = pickUserToTrain([...lineages.values()], options);
      if (picked === null || picked.user === null) break;
      order.push(picked.user);
      lineages.set(picked.user, { ...picked, ready: picked.ready - 16, lastTrainedAt: round, stepsToday: picked.stepsToday + 1 });
    }
    expect(order).toEqual(['acme/a', 'acme/b', 'acme/busy', 'acme/a', 'acme/b', 'acme/busy']);
  });
});

describe('trainingActivityOf', () => {
  it('counts each lineage\'s steps in the last 24 hours and its last step, ignoring versions no step made', () => {
    const now = 100 * hour;
    const activity = trainingActivityOf(
      [
        { user: null, step: null, createdAt: 0 },
        { user: 'acme/ann', step: 1, createdAt: now - 30 * hour },
        { user: 'acme/ann', step: 2, createdAt: now - 2 * hour },
        { user: 'acme/ann', step: 4, createdAt: now - hour },
        { user: 'acme/bob', step: 3, createdAt: now - 3 * hour },
      ],
      now,
    );
    expect(activity.get('acme/ann')).toEqual({ lastTrainedAt: now - hour, stepsToday: 2 });
    expect(activity.get('acme/bob')).toEqual({ lastTrainedAt: now - 3 * hour, stepsToday: 1 });
    expect(activity.has(null)).toBe(false);
  });
});

describe('readySamplesOverQuota', () => {
  it('is what exceeds the samples kept, never negative', () => {
    expect(readySamplesOverQuota(300, 256)).toBe(44);
    expect(readySamplesOverQuota(10, 256)).toBe(0);
  });
});
