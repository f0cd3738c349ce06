/**
 * The one seam through which a person's reply reaches the customer (DESIGN §13): a registry of
 * deliverers, one per channel word. A channel module (Slack, WhatsApp, Teams, …) registers its
 * deliverer with the container; `deliver` calls the conversation's channel's deliverer once the
 * reply has committed. Every reply is also published on the conversation's events
 * (chat.conversation-events.ts): that is the delivery of the chat family (`api`), whose client
 * reads the conversation's messages or its events stream, and of the web widget, whose events
 * stream listens on the same events. A channel with no deliverer is delivered by those events.
 */

/** What a deliverer is given: the stored reply and the conversation it answers. */
export interface OutboundReply {
  companyId: string;
  conversationId: string;
  /** The conversation's channel word (`api`, `web`, `slack`, `whatsapp`, `teams`, …). */
  channel: string;
  /** The deployment the conversation came through (null: the chat family without one). */
  deploymentId: string | null;
  agentId: string;
  /** The customer's id as the channel knows it (the chat `user`: Slack user, `wa_id`, …). */
  externalUserId: string | null;
  /** The stored message (role `human`). */
  messageId: string;
  content: string;
  /** The person who wrote it, and the name to show for them. */
  authorId: string;
  authorName: string;
  createdAt: Date;
}

/**
 * Sends a reply on one channel. Resolves when the vendor accepted it; throws (any Error) when it
 * did not — the message says why in words a person can act on, never a secret. It is called after
 * the reply committed and is bounded by `signal` (the delivery time limit).
 */
export interface ChannelDeliverer {
  deliver(reply: OutboundReply, signal: AbortSignal): Promise<void>;
}

export interface DeliveryOutcome {
  status: 'delivered' | 'failed';
  /** Why it failed (null when delivered). */
  error: string | null;
}

export interface DeliveryRegistry {
  /** Registers the deliverer of `channel` (one per channel: a second registration replaces the first). */
  register(channel: string, deliverer: ChannelDeliverer): void;
  /** Whether replies on `channel` go through a registered deliverer (else: the events only). */
  has(channel: string | null): boolean;
  /**
   * Delivers through the channel's deliverer; never throws. A channel without one is `delivered`
   * (the events carried it).
   */
  deliver(reply: OutboundReply): Promise<DeliveryOutcome>;
}

const MAX_ERROR_CHARS = 500;

export function createDeliveryRegistry(options: { timeoutMs: number }): DeliveryRegistry {
  const deliverers = new Map<string, ChannelDeliverer>();
  return {
    register(channel, deliverer) {
      deliverers.set(channel, deliverer);
    },
    has(channel) {
      return channel !== null && deliverers.has(channel);
    },
    async deliver(reply) {
      const deliverer = deliverers.get(reply.channel);
      if (!deliverer) return { status: 'delivered', error: null };
      const signal = AbortSignal.timeout(options.timeoutMs);
      try {
        await deliverer.deliver(reply, signal);
        return { status: 'delivered', error: null };
      } catch (error) {
        const reason = signal.aborted
          ? `The ${reply.channel} channel did not accept the reply within ${options.timeoutMs} ms`
          : error instanceof Error && error.message
            ? error.message
            : `The ${reply.channel} channel refused the reply`;
        return { status: 'failed', error: reason.slice(0, MAX_ERROR_CHARS) };
      }
    },
  };
}
