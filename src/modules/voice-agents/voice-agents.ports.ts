/** What the voice agents module needs from outside, narrowed to the calls it makes. */

export interface ProviderVoices {
  /**
   * Whether the configured voice provider (ElevenLabs) has this voice id for the account (its
   * voice list, cached by the adapter). Throws when the provider cannot be asked.
   */
  hasVoice(voiceId: string, signal: AbortSignal): Promise<boolean>;
}
