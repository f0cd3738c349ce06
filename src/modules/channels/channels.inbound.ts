/**
 * The vendors' inbound bodies read into the events a deployment answers (DESIGN §12), or why
 * there is nothing to answer. Nothing from a vendor is trusted: every field is checked for type
 * and size, text is cut to what a chat turn takes, and a body of the wrong shape is a 400.
 *
 * - Slack Events API: `url_verification` (echo the challenge); `event_callback` with
 *   `app_mention` (starts or continues a thread), `message` in a DM (`channel_type: im`), or a
 *   `message` in a thread the agent already answers (followUpOnly). Messages with a `subtype`
 *   (edits, joins, bot messages) or a `bot_id`, and the app's own user, are ignored. Keys:
 *   `event:<event_id>` and `msg:<channel>:<ts>` (a mention arrives as a message and an app_mention).
 * - WhatsApp Cloud API: `entry[].changes[]` of field `messages` for the integration's number;
 *   text, audio (voice notes), button and interactive replies; `statuses` ignored. Key: `wamid:<id>`.
 * - Bot Framework: `message` activities (mentions stripped) and `conversationUpdate` adding the
 *   bot (a welcome); the bot's own activities ignored. Key: `activity:<id>`.
 */
import { AppErrors } from '../../http/errors.js';

/** The longest customer message a turn takes (the chat form's `query`). */
export const MAX_TEXT = 8000;
const MAX_ID = 512;

export interface EventInput {
  text: string;
  user: { id: string; name: string | null } | null;
  /** A WhatsApp voice note to transcribe. */
  audio?: { media_id: string; mime_type: string | null };
  /** Teams: the activity answered (replies go to it). */
  reply_to_id?: string;
  /** The vendor's locale for the user, when it gives one (Teams `locale`). */
  locale?: string | null;
}

export interface InboundEvent {
  keys: string[];
  threadKey: string;
  /** The thread's addressing: where replies (the agent's and a person's) go. */
  replyTo: Record<string, unknown>;
  kind: 'message' | 'welcome';
  input: EventInput;
  /** Answered only when the thread already exists (a Slack reply in a channel thread). */
  followUpOnly?: boolean;
  /** The message is its thread's root (a Slack message not in a thread): its thread is most likely new. */
  startsThread?: boolean;
}

export type Inbound =
  | { kind: 'challenge'; challenge: string }
  | { kind: 'ignored'; why: string }
  | { kind: 'events'; events: InboundEvent[] };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function malformed(what: string): never {
  throw AppErrors.validation(`Malformed ${what}`);
}

/** A required string field of at most `max` characters. */
function str(object: Json, key: string, where: string, max = MAX_ID): string {
  const value = object[key];
  if (typeof value !== 'string' || value === '' || value.length > max) {
    malformed(`${where}: '${key}' must be a string of 1 to ${max} characters`);
  }
  return value;
}

function optStr(object: Json, key: string, max = MAX_ID): string | undefined {
  const value = object[key];
  return typeof value === 'string' && value !== '' && value.length <= max ? value : undefined;
}

/** Customer text as a turn takes it: control characters (but newlines and tabs) removed, cut to MAX_TEXT. */
export function cleanText(text: string): string {
  const clean = text
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '')
    .replace(/[\uD800-\uDFFF]/g, (c, i: number, s: string) => {
      const code = c.charCodeAt(0);
      const next = s.charCodeAt(i + 1);
      const prev = s.charCodeAt(i - 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) return c;
      if (code >= 0xdc00 && prev >= 0xd800 && prev <= 0xdbff) return c;
      return '';
    });
  return clean.length > MAX_TEXT ? clean.slice(0, MAX_TEXT) : clean;
}

export function parseJson(raw: Buffer, what: string): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return malformed(`${what}: the body is not JSON`);
  }
}

/** Slack: the Events API body (already verified). */
export function readSlack(body: unknown): Inbound {
  if (!isObject(body)) malformed('Slack event: the body must be a JSON object');
  const type = str(body, 'type', 'Slack event', 100);
  if (type === 'url_verification')
    return { kind: 'challenge', challenge: str(body, 'challenge', 'Slack url_verification', 1000) };
  if (type !== 'event_callback') return { kind: 'ignored', why: `Slack ${type} needs no answer` };
  const eventId = str(body, 'event_id', 'Slack event_callback', 200);
  const event = body.event;
  if (!isObject(event)) malformed("Slack event_callback: 'event' must be an object");
  const eventType = str(event, 'type', 'Slack event', 100);
  if (eventType !== 'message' && eventType !== 'app_mention')
    return { kind: 'ignored', why: `Slack ${eventType} is not answered` };
  if (event.subtype !== undefined || event.bot_id !== undefined)
    return { kind: 'ignored', why: 'a bot message or a message change' };
  const authorizations = Array.isArray(body.authorizations) ? body.authorizations : [];
  const botUser = isObject(authorizations[0]) ? optStr(authorizations[0], 'user_id') : undefined;
  const channel = str(event, 'channel', 'Slack event');
  const ts = str(event, 'ts', 'Slack event', 40);
  const user = str(event, 'user', 'Slack event');
  if (botUser && user === botUser) return { kind: 'ignored', why: "the app's own message" };
  const threadTs = optStr(event, 'thread_ts', 40);
  const rawText = typeof event.text === 'string' ? event.text : '';
  const text = cleanText(rawText.replace(/<@[A-Z0-9]+(\|[^>]*)?>/g, '').trim());
  const isDm = event.channel_type === 'im';
  if (eventType === 'message' && !isDm && !(threadTs && threadTs !== ts)) {
    return { kind: 'ignored', why: 'a channel message that does not mention the app' };
  }
  if (!text) return { kind: 'ignored', why: 'a message without text' };
  const root = threadTs ?? ts;
  const profile = isObject(event.user_profile) ? event.user_profile : {};
  const name = optStr(profile, 'real_name', 200) ?? optStr(profile, 'display_name', 200) ?? null;
  return {
    kind: 'events',
    events: [
      {
        keys: [`event:${eventId}`, `msg:${channel}:${ts}`],
        threadKey: `${channel}:${root}`,
        replyTo: { channel, thread_ts: root },
        kind: 'message',
        input: { text, user: { id: user, name } },
        followUpOnly: eventType === 'message' && !isDm,
        startsThread: root === ts,
      },
    ],
  };
}

/** WhatsApp: a Cloud API notification (already verified), for the integration's phone number id. */
export function readWhatsapp(body: unknown, phoneNumberId: string): Inbound {
  if (!isObject(body)) malformed('WhatsApp notification: the body must be a JSON object');
  if (body.object !== 'whatsapp_business_account')
    return { kind: 'ignored', why: 'not a WhatsApp Business notification' };
  if (!Array.isArray(body.entry)) malformed("WhatsApp notification: 'entry' must be an array");
  const events: InboundEvent[] = [];
  for (const entry of body.entry) {
    if (!isObject(entry) || !Array.isArray(entry.changes))
      malformed("WhatsApp notification: each entry needs 'changes'");
    for (const change of entry.changes) {
      if (!isObject(change) || !isObject(change.value)) malformed("WhatsApp notification: each change needs a 'value'");
      if (change.field !== 'messages') continue;
      const value = change.value;
      const metadata = isObject(value.metadata) ? value.metadata : {};
      if (metadata.phone_number_id !== undefined && String(metadata.phone_number_id) !== phoneNumberId) continue;
      const names = new Map<string, string>();
      for (const contact of Array.isArray(value.contacts) ? value.contacts : []) {
        if (!isObject(contact)) continue;
        const waId = optStr(contact, 'wa_id', 30);
        const name = isObject(contact.profile) ? optStr(contact.profile, 'name', 200) : undefined;
        if (waId && name) names.set(waId, name);
      }
      if (value.messages !== undefined && !Array.isArray(value.messages))
        malformed("WhatsApp change: 'messages' must be an array");
      for (const message of (value.messages as unknown[] | undefined) ?? []) {
        if (!isObject(message)) malformed('WhatsApp message: must be an object');
        const id = str(message, 'id', 'WhatsApp message');
        const from = str(message, 'from', 'WhatsApp message', 30);
        if (!/^[0-9]{5,20}$/.test(from)) malformed("WhatsApp message: 'from' must be a phone number");
        const type = str(message, 'type', 'WhatsApp message', 50);
        const input: EventInput = { text: '', user: { id: from, name: names.get(from) ?? null } };
        if (type === 'text' && isObject(message.text))
          input.text = cleanText(str(message.text, 'body', 'WhatsApp text', 65_536));
        else if (type === 'button' && isObject(message.button))
          input.text = cleanText(str(message.button, 'text', 'WhatsApp button', 4096));
        else if (type === 'interactive' && isObject(message.interactive)) {
          const reply = message.interactive.button_reply ?? message.interactive.list_reply;
          if (isObject(reply)) input.text = cleanText(str(reply, 'title', 'WhatsApp interactive reply', 4096));
        } else if (type === 'audio' && isObject(message.audio)) {
          input.audio = {
            media_id: str(message.audio, 'id', 'WhatsApp audio'),
            mime_type: optStr(message.audio, 'mime_type', 200) ?? null,
          };
        }
        if (!input.text.trim() && !input.audio) continue;
        events.push({ keys: [`wamid:${id}`], threadKey: from, replyTo: { to: from }, kind: 'message', input });
      }
    }
  }
  return events.length
    ? { kind: 'events', events }
    : { kind: 'ignored', why: 'no customer message (statuses or other changes)' };
}

/** The fields of a Bot Framework activity read before its token is checked (channel, service URL). */
export function peekActivity(raw: Buffer): { channelId: string; serviceUrl: string } {
  try {
    const body = JSON.parse(raw.toString('utf8')) as Json;
    return {
      channelId: typeof body.channelId === 'string' ? body.channelId : '',
      serviceUrl: typeof body.serviceUrl === 'string' ? body.serviceUrl : '',
    };
  } catch {
    return { channelId: '', serviceUrl: '' };
  }
}

/** Teams: a Bot Framework activity (its token already checked). */
export function readTeams(body: unknown): Inbound {
  if (!isObject(body)) malformed('Bot Framework activity: the body must be a JSON object');
  const type = str(body, 'type', 'activity', 100);
  const id = str(body, 'id', 'activity');
  const serviceUrl = str(body, 'serviceUrl', 'activity', 2048);
  const conversation = body.conversation;
  const from = body.from;
  const recipient = body.recipient;
  if (!isObject(conversation) || !isObject(from) || !isObject(recipient)) {
    malformed("activity: 'conversation', 'from' and 'recipient' must be objects");
  }
  const conversationId = str(conversation, 'id', 'activity conversation', 1024);
  const bot = { id: str(recipient, 'id', 'activity recipient'), name: optStr(recipient, 'name', 200) ?? null };
  const replyTo = { service_url: serviceUrl, conversation_id: conversationId, bot };
  const locale = optStr(body, 'locale', 20) ?? null;
  if (type === 'conversationUpdate') {
    const added = Array.isArray(body.membersAdded) ? body.membersAdded : [];
    if (!added.some((member) => isObject(member) && member.id === bot.id)) {
      return { kind: 'ignored', why: 'a conversation update that does not add the bot' };
    }
    return {
      kind: 'events',
      events: [
        {
          keys: [`activity:${id}`],
          threadKey: conversationId,
          replyTo,
          kind: 'welcome',
          input: { text: '', user: null, locale },
        },
      ],
    };
  }
  if (type !== 'message') return { kind: 'ignored', why: `a ${type} activity needs no answer` };
  const fromId = str(from, 'id', 'activity from');
  if (fromId === bot.id || from.role === 'bot') return { kind: 'ignored', why: "the bot's own activity" };
  const rawText = typeof body.text === 'string' ? body.text : '';
  const text = cleanText(rawText.replace(/<at>[^<]*<\/at>/g, '').trim());
  if (!text) return { kind: 'ignored', why: 'a message without text' };
  const user = { id: optStr(from, 'aadObjectId') ?? fromId, name: optStr(from, 'name', 200) ?? null };
  return {
    kind: 'events',
    events: [
      {
        keys: [`activity:${id}`],
        threadKey: conversationId,
        replyTo,
        kind: 'message',
        input: { text, user, reply_to_id: id, locale },
      },
    ],
  };
}
