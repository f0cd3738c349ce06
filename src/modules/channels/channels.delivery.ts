/**
 * Sending into a vendor thread — the one path every reply takes, the agent's answers and (DESIGN
 * §13) a person's replies during a hand-off: `sendToThread` renders Markdown for the vendor
 * (channels.format.ts), splits it, and posts each piece: Slack `chat.postMessage` in the thread,
 * WhatsApp a text message to the customer's number, Teams an activity in the conversation (a
 * reply to the customer's activity when there is one). The Teams service URL is checked against
 * the integration's `service_url_hosts` again at send time.
 */
import { startTimeLimit } from '../../lib/abort-limit.js';
import type { ChannelVendors, TeamsChannelConfig, TeamsActivity, WhatsappChannelConfig } from '../../ports/channels.js';
import { ConnectorError } from '../../ports/connectors.js';
import { renderAnswer, type Source } from './channels.format.js';
import type { ThreadRow } from './channels.repo.js';
import { serviceHostAllowed } from './channels.verify.js';

/** The Bot Framework's service hosts, when a `teams` integration names none. */
export const DEFAULT_SERVICE_URL_HOSTS = ['smba.trafficmanager.net', '*.botframework.com', '*.teams.microsoft.com'];

/** How long one send (all its pieces) may take. */
const SEND_TIMEOUT_MS = 60_000;

export interface TeamsReplyTo {
  service_url: string;
  conversation_id: string;
  bot: { id: string; name: string | null };
}

export function allowedHosts(config: Record<string, unknown>): string[] {
  const hosts = config.service_url_hosts;
  return Array.isArray(hosts) && hosts.length ? (hosts as string[]) : DEFAULT_SERVICE_URL_HOSTS;
}

export function teamsActivity(replyTo: TeamsReplyTo, type: TeamsActivity['type'], text?: string, replyToId?: string) {
  const activity: TeamsActivity = {
    type,
    from: { id: replyTo.bot.id, ...(replyTo.bot.name ? { name: replyTo.bot.name } : {}) },
    conversation: { id: replyTo.conversation_id },
  };
  if (text !== undefined) Object.assign(activity, { text, textFormat: 'markdown' });
  if (replyToId) activity.replyToId = replyToId;
  return activity;
}

export function createDelivery(vendors: ChannelVendors) {
  return {
    /**
     * Sends `text` (Markdown) and its sources into the thread, in as many messages as the vendor
     * needs. `replyToId`: the Teams activity answered. Throws ConnectorError when the vendor refuses.
     */
    async sendToThread(
      thread: Pick<ThreadRow, 'channel' | 'reply_to'>,
      config: Record<string, unknown>,
      text: string,
      sources: readonly Source[] = [],
      replyToId?: string,
      bound?: AbortSignal,
    ): Promise<number> {
      const messages = renderAnswer(thread.channel, text, sources);
      const to = thread.reply_to;
      // One time limit for all the messages, joined to the caller's bound when there is one.
      const limit = startTimeLimit(bound, SEND_TIMEOUT_MS);
      const signal = limit.signal;
      try {
        for (const message of messages) {
          switch (thread.channel) {
            case 'slack':
              await vendors.slack.postMessage(
                {
                  bot_token: String(config.bot_token),
                  ...(config.base_url ? { base_url: String(config.base_url) } : {}),
                },
                {
                  channel: String(to.channel),
                  thread_ts: String(to.thread_ts),
                  text: message.text,
                  blocks: message.blocks,
                },
                signal,
              );
              break;
            case 'whatsapp':
              await vendors.whatsapp.sendText(
                config as unknown as WhatsappChannelConfig,
                String(to.to),
                message.text,
                signal,
              );
              break;
            case 'teams': {
              const replyTo = to as unknown as TeamsReplyTo;
              if (!serviceHostAllowed(replyTo.service_url, allowedHosts(config))) {
                throw new ConnectorError(
                  'Microsoft Teams',
                  "the conversation's service URL is not among service_url_hosts",
                  {
                    retryable: false,
                  },
                );
              }
              await vendors.teams.send(
                config as unknown as TeamsChannelConfig,
                replyTo.service_url,
                teamsActivity(replyTo, 'message', message.text, replyToId),
                signal,
              );
              break;
            }
          }
        }
      } finally {
        limit.release();
      }
      return messages.length;
    },

    /** A typing indicator in a Teams conversation (errors ignored: it is only a courtesy). */
    async typing(thread: Pick<ThreadRow, 'reply_to'>, config: Record<string, unknown>): Promise<void> {
      const replyTo = thread.reply_to as unknown as TeamsReplyTo;
      if (!serviceHostAllowed(replyTo.service_url, allowedHosts(config))) return;
      await vendors.teams
        .send(
          config as unknown as TeamsChannelConfig,
          replyTo.service_url,
          teamsActivity(replyTo, 'typing'),
          AbortSignal.timeout(10_000),
        )
        .catch(() => undefined);
    },
  };
}

export type Delivery = ReturnType<typeof createDelivery>;
