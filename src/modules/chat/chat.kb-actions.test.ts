import { describe, expect, it } from 'vitest';
import { fillInput, orderReference, ticketId, transcript } from './chat.kb-actions.js';
import type { AgentTool } from './chat.ports.js';

const tool = (inputSchema: Record<string, unknown>): AgentTool => ({
  name: 'x',
  description: '',
  inputSchema,
  integrationId: '00000000-0000-4000-8000-000000000000',
  integrationType: 'x',
  tool: 'x',
  notification: 'api_call',
});

describe('orderReference', () => {
  it.each([
    ['order #1042', '1042'],
    ['Where is my order 1042?', '1042'],
    ['order number 1042 has not arrived', '1042'],
    ['Order no. 1042', '1042'],
    ['my order is #1042', '1042'],
    ['What about the delivery of #1042?', '1042'],
    ['أين طلبي رقم 1042', '1042'],
  ])('%j → %s', (query, expected) => expect(orderReference(query)).toBe(expected));

  it.each(['How do I return an item?', 'Is #1 on sale?', 'I ordered 3 mugs', 'in order to pay'])('%j → none', (query) =>
    expect(orderReference(query)).toBeNull(),
  );
});

describe('fillInput', () => {
  const values = { subject: 'Help', text: 'Customer: hi', to: 'team@acme.test' };

  it('fills a help-desk ticket (subject, body) and leaves optional keys out', () => {
    const zendesk = tool({
      type: 'object',
      properties: {
        subject: { type: 'string', maxLength: 250 },
        body: { type: 'string', maxLength: 60000 },
        requester_email: { type: 'string' },
      },
      required: ['subject', 'body'],
    });
    expect(fillInput(zendesk, values)).toEqual({ subject: 'Help', body: 'Customer: hi' });
  });

  it('fills an e-mail (to, subject, text) and cuts values to maxLength', () => {
    const smtp = tool({
      type: 'object',
      properties: { to: { type: 'string' }, subject: { type: 'string', maxLength: 2 }, text: { type: 'string' } },
      required: ['to', 'subject', 'text'],
    });
    expect(fillInput(smtp, values)).toEqual({ to: 'team@acme.test', subject: 'He', text: 'Customer: hi' });
    expect(fillInput(smtp, { ...values, to: null })).toBeNull();
  });

  it('gives up when a required key has no value', () => {
    expect(
      fillInput(tool({ properties: { ticket_id: { type: 'integer' } }, required: ['ticket_id'] }), values),
    ).toBeNull();
  });
});

describe('ticketId and transcript', () => {
  it('reads the ticket number of the usual shapes', () => {
    expect(ticketId({ id: 123 })).toBe('123');
    expect(ticketId({ ticket: { id: 'T-9' } })).toBe('T-9');
    expect(ticketId({ ticket_id: 7 })).toBe('7');
    expect(ticketId({})).toBeNull();
  });

  it('writes the conversation with the agent’s title', () => {
    expect(
      transcript(
        [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
        ],
        'A person please',
        'Helper',
      ),
    ).toBe('Customer: Hi\nHelper: Hello\nCustomer: A person please');
  });
});
