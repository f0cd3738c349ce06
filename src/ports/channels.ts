/**
 * Channels (DESIGN §12): what the platform needs of Slack, WhatsApp and Microsoft Teams to answer
 * customers there — sending a text into a conversation's thread, fetching a voice note, and (for
 * Teams) checking the Bot Framework's signed token. Adapters under src/adapters/connectors/
 * implement it on the integrations' guarded HTTP client (SSRF guard, time limit, size cap).
 * Every call throws ConnectorError on a vendor failure; no message holds a secret.
 */
import type { AudioFile } from './speech.js';

/** The clear config of a `slack` integration, as a channel uses it. */
export interface SlackChannelConfig {
  bot_token: string;
  base_url?: string;
}

/** The clear config of a `whatsapp` integration, as a channel uses it. */
export interface WhatsappChannelConfig {
  access_token: string;
  phone_number_id: string;
  api_version?: string;
  base_url?: string;
}

/** The clear config of a `teams` integration. */
export interface TeamsChannelConfig {
  app_id: string;
  app_password: string;
  tenant_id?: string;
  token_url?: string;
  openid_metadata_url?: string;
  service_url_hosts?: string[];
}

/** A Slack message: the fallback `text` and its Block Kit `blocks` (section blocks of mrkdwn). */
export interface SlackMessage {
  channel: string;
  thread_ts: string;
  text: string;
  blocks?: readonly Record<string, unknown>[];
}

/** A Bot Framework activity sent to a conversation (message or typing). */
export interface TeamsActivity {
  type: 'message' | 'typing';
  text?: string;
  textFormat?: 'markdown' | 'plain';
  from?: { id: string; name?: string };
  recipient?: { id: string; name?: string };
  conversation: { id: string };
  replyToId?: string;
}

/** Why a Bot Framework token was refused, said in the 401 (never the token itself). */
export type TeamsTokenCheck = { ok: true } | { ok: false; reason: string };

export interface ChannelVendors {
  slack: {
    /** `chat.postMessage` in the thread; resolves with the message's `ts`. */
    postMessage(config: SlackChannelConfig, message: SlackMessage, signal: AbortSignal): Promise<{ ts: string | null }>;
  };
  whatsapp: {
    /** `POST /{version}/{phone_number_id}/messages`, a text message to `to` (wa_id); its message id. */
    sendText(config: WhatsappChannelConfig, to: string, body: string, signal: AbortSignal): Promise<{ id: string }>;
    /** A media object's bytes: `GET /{version}/{media_id}` for its url, then the url with the bearer. */
    downloadMedia(config: WhatsappChannelConfig, mediaId: string, signal: AbortSignal): Promise<AudioFile>;
  };
  teams: {
    /**
     * Checks `Authorization: Bearer <jwt>` of an activity: RS256 with a key of the OpenID
     * metadata's JWKS (endorsed for the activity's channel), issuer, audience = app_id, expiry
     * with 5 minutes' skew, the `serviceurl` claim equal to the activity's serviceUrl.
     */
    verify(
      config: TeamsChannelConfig,
      authorization: string | undefined,
      activity: { serviceUrl: string; channelId: string },
    ): Promise<TeamsTokenCheck>;
    /** Sends an activity to `{serviceUrl}/v3/conversations/{id}/activities[/{replyToId}]` with the bot's token. */
    send(config: TeamsChannelConfig, serviceUrl: string, activity: TeamsActivity, signal: AbortSignal): Promise<void>;
  };
}
