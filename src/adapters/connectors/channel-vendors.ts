/**
 * The channels' vendor calls (ports/channels.ts) on the connectors' guarded HTTP client:
 * Slack `chat.postMessage` in a thread, WhatsApp Cloud API text messages and media downloads,
 * Bot Framework activities with a client-credentials token (a 401 drops the token and tries once
 * more with a new one).
 */
import { ConnectorError } from '../../ports/connectors.js';
import type { ChannelVendors, TeamsActivity, TeamsChannelConfig, WhatsappChannelConfig } from '../../ports/channels.js';
import { apiRoot } from './fields.js';
import { errorForStatus, type ConnectorHttp } from './http.js';
import { callSlack } from './slack/slack.connector.js';
import type { TeamsAuth } from './teams/teams.auth.js';
import { WHATSAPP_DEFAULT_API_VERSION, whatsappError } from './whatsapp/whatsapp.connector.js';

/** WhatsApp's largest audio file (16 MB). */
const MAX_MEDIA_BYTES = 16 * 1024 * 1024;

export function createChannelVendors(http: ConnectorHttp, teamsAuth: TeamsAuth): ChannelVendors {
  const graph = (config: WhatsappChannelConfig) =>
    `${apiRoot(config, 'https://graph.facebook.com')}/${config.api_version ?? WHATSAPP_DEFAULT_API_VERSION}`;
  const graphErrors = (status: number, body: unknown, headers: Record<string, string | string[] | undefined>) =>
    whatsappError(status, body, headers) ?? errorForStatus('WhatsApp', status, undefined, headers);

  async function postActivity(
    config: TeamsChannelConfig,
    serviceUrl: string,
    activity: TeamsActivity,
    signal: AbortSignal,
    retried = false,
  ): Promise<void> {
    const token = await teamsAuth.accessToken(config, signal);
    const conversation = encodeURIComponent(activity.conversation.id);
    const reply = activity.replyToId ? `/${encodeURIComponent(activity.replyToId)}` : '';
    try {
      await http.request({
        vendor: 'Microsoft Teams',
        method: 'POST',
        url: `${serviceUrl.replace(/\/+$/, '')}/v3/conversations/${conversation}/activities${reply}`,
        headers: { authorization: `Bearer ${token}` },
        json: activity,
        signal,
      });
    } catch (error) {
      if (retried || !(error instanceof ConnectorError) || error.status !== 401) throw error;
      teamsAuth.forget(config);
      await postActivity(config, serviceUrl, activity, signal, true);
    }
  }

  return {
    slack: {
      async postMessage(config, message, signal) {
        const data = await callSlack(
          http,
          'chat.postMessage',
          {
            channel: message.channel,
            thread_ts: message.thread_ts,
            text: message.text,
            ...(message.blocks ? { blocks: message.blocks } : {}),
            unfurl_links: false,
            unfurl_media: false,
          },
          { config, signal },
        );
        return { ts: typeof data.ts === 'string' ? data.ts : null };
      },
    },
    whatsapp: {
      async sendText(config, to, body, signal) {
        const answer = await http.request({
          vendor: 'WhatsApp',
          method: 'POST',
          url: `${graph(config)}/${encodeURIComponent(config.phone_number_id)}/messages`,
          headers: { authorization: `Bearer ${config.access_token}` },
          json: {
            messaging_product: 'whatsapp',
            recipient_type: 'individual',
            to,
            type: 'text',
            text: { preview_url: false, body },
          },
          signal,
          errorFor: graphErrors,
        });
        const messages = (answer.body as { messages?: { id?: unknown }[] } | undefined)?.messages;
        const id = Array.isArray(messages) ? messages[0]?.id : undefined;
        if (typeof id !== 'string')
          throw new ConnectorError('WhatsApp', 'the answer carried no message id', { retryable: false });
        return { id };
      },
      async downloadMedia(config, mediaId, signal) {
        const auth = { authorization: `Bearer ${config.access_token}` };
        const meta = (
          await http.request({
            vendor: 'WhatsApp',
            method: 'GET',
            url: `${graph(config)}/${encodeURIComponent(mediaId)}`,
            headers: auth,
            signal,
            errorFor: graphErrors,
          })
        ).body as { url?: unknown; mime_type?: unknown } | undefined;
        if (typeof meta?.url !== 'string') {
          throw new ConnectorError('WhatsApp', `media ${mediaId} has no download url`, { retryable: false });
        }
        const media = await http.request({
          vendor: 'WhatsApp',
          method: 'GET',
          url: meta.url,
          headers: auth,
          signal,
          accept: 'bytes',
          maxBytes: MAX_MEDIA_BYTES,
          errorFor: graphErrors,
        });
        const mimetype = (typeof meta.mime_type === 'string' ? meta.mime_type : 'audio/ogg').split(';')[0]!.trim();
        const extension = mimetype.split('/')[1]?.replace(/[^a-z0-9]/g, '') || 'ogg';
        return { buffer: media.body as Buffer, filename: `voice-note.${extension}`, mimetype };
      },
    },
    teams: {
      verify: (config, authorization, activity) => teamsAuth.verify(config, authorization, activity),
      send: (config, serviceUrl, activity, signal) => postActivity(config, serviceUrl, activity, signal),
    },
  };
}
