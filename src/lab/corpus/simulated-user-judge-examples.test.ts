import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../core/seeded-random.js';
import { builtinUserNames, builtinUsers, satisfiesPreference } from '../../builtin/user-preference.js';
import { simulatedUserJudgeExample } from './simulated-user-judge-examples.js';

const fenced = (prompt: string, label: string): string =>
  new RegExp(`${label}:\\n<<<(?:assistant|user)>>>\\n([\\s\\S]*?)\\n<<<end>>>`).exec(prompt)?.[1] ?? '';

describe('simulatedUserJudgeExample', () => {
  it('answers a reply that breaks the preference with a complaint and one that keeps it with thanks', () => {
    for (const name of builtinUserNames) {
      const user = builtinUsers[name];
      for (let index = 0; index < 20; index += 1) {
        const complaint = index % 2 === 0;
        const example = simulatedUserJudgeExample(createSeededRandom(index), user, index % 4 < 2 ? 'verdict' : 'hint', complaint);
        const prompt = example.messages[1]?.content ?? '';
        const reply = fenced(prompt, 'Reply');
        if (!reply.includes('[...]')) expect(satisfiesPreference(user.preference, reply)).toBe(!complaint);
        expect(complaint ? user.complaints : user.thanks).toContain(fenced(prompt, 'Next state'));
        expect(example.expectedScore).toBe(example.prompt === 'hint' ? (complaint ? 1 : -1) : complaint ? -1 : 1);
        expect(Object.keys(example.wanted).length).toBeGreaterThan(0);
      }
    }
  });

  it('gives each phrase in turn when asked for one by index', () => {
    const user = builtinUsers.student;
    const thanks = [0, 1, 2, 3].map((index) => fenced(simulatedUserJudgeExample(createSeededRandom(7), user, 'verdict', false, index).messages[1]?.content ?? '', 'Next state'));
    expect(thanks).toEqual([user.thanks[0], user.thanks[1], user.thanks[0], user.thanks[1]]);
    const complaints = user.complaints.map((_, index) =>
      fenced(simulatedUserJudgeExample(createSeededRandom(7), user, 'hint', true, index).messages[1]?.content ?? '', 'Next state'),
    );
    expect(complaints).toEqual(user.complaints);
  });
});
