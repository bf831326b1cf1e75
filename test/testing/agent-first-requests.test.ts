import { describe, expect, it } from 'vitest';
import { scrubbed } from './agent-first-requests.js';

describe('scrubbed', () => {
  it('replaces run-specific folders and ids, and leaves words that only look like them', () => {
    expect(scrubbed('<root>/tmp/clawrl-agent-workspace-AbC12</root> cwd=/tmp/clawrl-agent-home-Zz9 /root/.codex, fix the root cause')).toBe(
      '<root>/home/user/project</root> cwd=/home/user /home/user/.codex, fix the root cause',
    );
    expect(scrubbed('session 0f8fad5b-d9cb-469f-a165-70867728950e key sk-abcdefghijkl')).toBe('session 00000000-0000-4000-8000-000000000000 key secret-scrubbed');
  });
});
