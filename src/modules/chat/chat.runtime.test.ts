import { describe, expect, it } from 'vitest';
import { parseAgentKey } from './chat.agent-key.js';
import { ESCALATE_MARKER, MarkerFilter } from './chat.runtime.js';
import { parseHistory } from './chat.turn-input.js';

describe('MarkerFilter', () => {
  it.each([
    [['Sorry, I cannot help. ', '[ESCALATE]'], 'Sorry, I cannot help. ', true],
    [['Sorry', ' [ES', 'CAL', 'ATE]'], 'Sorry ', true],
    [['Use [1] and [2].'], 'Use [1] and [2].', false],
    [['A [E', 'xample]'], 'A [Example]', false],
    [['ends with [ESC'], 'ends with [ESC', false],
  ])('streams %j as %j (escalated: %s)', (deltas, expected, found) => {
    const filter = new MarkerFilter();
    const out = deltas.map((delta) => filter.push(delta)).join('') + filter.flush();
    expect(out).toBe(expected);
    expect(filter.found).toBe(found);
  });

  it('never emits a partial marker before it is complete', () => {
    const filter = new MarkerFilter();
    for (const char of `ok ${ESCALATE_MARKER}`) expect(filter.push(char)).not.toContain('[');
  });
});

describe('parseAgentKey', () => {
  it('reads the four segments', () => {
    expect(parseAgentKey('agent:3F0C2A4E-1111-4222-8333-444455556666:Web:us-east')).toEqual({
      agentId: '3f0c2a4e-1111-4222-8333-444455556666',
      channel: 'web',
      region: 'us-east',
    });
  });
  it.each([
    '',
    'agent',
    'agent:x:web:us-east',
    'agent:3f0c2a4e-1111-4222-8333-444455556666:web',
    'agent:3f0c2a4e-1111-4222-8333-444455556666:web:us-east:extra',
    'agent:3f0c2a4e-1111-4222-8333-444455556666:we b:us',
  ])('refuses %j with 400', (value) => {
    expect(() => parseAgentKey(value)).toThrow(expect.objectContaining({ statusCode: 400 }));
  });
});

describe('parseHistory', () => {
  it('accepts user and assistant turns', () => {
    expect(parseHistory('[{"role":"user","content":"a"},{"role":"assistant","content":"b","extra":1}]')).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]);
    expect(parseHistory(undefined)).toEqual([]);
    expect(parseHistory(' ')).toEqual([]);
  });
  it.each(['{}', '[1]', '[{"role":"tool","content":"x"}]', '[{"role":"user","content":3}]', 'nope'])(
    'refuses %s',
    (raw) => {
      expect(() => parseHistory(raw)).toThrow(expect.objectContaining({ statusCode: 400 }));
    },
  );
});
