/** Outgoing e-mail. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** What the mail is about (`invitation`, …), kept with outbox rows. */
  kind: string;
  companyId?: string | null;
}

export interface MailResult {
  /** `smtp` when a server accepted it, `outbox` when it was stored for later delivery. */
  via: 'smtp' | 'outbox';
}

export interface Mailer {
  /** Delivers the message or stores it; never loses it. */
  send(message: MailMessage, signal?: AbortSignal): Promise<MailResult>;
  close(): Promise<void>;
}
