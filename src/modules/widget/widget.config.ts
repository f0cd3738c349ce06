/**
 * The widget's part of a deployment's config, as the deployments module stores it (its
 * `ChannelConfigRules` port): `config.widget` checked (web deployments only), completed with the
 * defaults, and its identity secret sealed — kept from the stored config when the client sends
 * it back masked or leaves it out, removed when it sends null.
 */
import { AppError } from '../../http/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { isSealed } from '../../lib/secret-box.js';
import { parseSettings, SettingsProblem } from './widget.settings.js';
import { identitySecretContext } from './widget.service.js';

export interface WidgetConfigRules {
  prepare(input: {
    companyId: string;
    channel: string;
    config: Record<string, unknown>;
    previous: Record<string, unknown> | null;
  }): Record<string, unknown> | null;
}

const invalid = (field: string, problem: string) =>
  new AppError(400, `Invalid field '${field}': ${problem}`, 'ValidationError');

function previousSecret(previous: Record<string, unknown> | null): string | null {
  const widget = previous?.widget;
  if (!widget || typeof widget !== 'object') return null;
  const secret = (widget as Record<string, unknown>).identity_secret;
  return isSealed(secret) ? secret : null;
}

export function createWidgetConfigRules(deps: { box: SecretBox; allowAnyOrigin: boolean }): WidgetConfigRules {
  return {
    prepare({ companyId, channel, config, previous }) {
      if (!('widget' in config)) return null;
      if (channel !== 'web')
        throw invalid('config.widget', `applies to web deployments only (this one's channel is ${channel})`);
      try {
        const { settings, secret } = parseSettings(config.widget, deps.allowAnyOrigin);
        const sealed =
          secret.kind === 'set'
            ? deps.box.seal(secret.plain!, identitySecretContext(companyId))
            : secret.kind === 'keep'
              ? previousSecret(previous)
              : null;
        return { ...config, widget: { ...settings, ...(sealed ? { identity_secret: sealed } : {}) } };
      } catch (error) {
        if (error instanceof SettingsProblem) throw invalid(error.field, error.message);
        throw error;
      }
    },
  };
}
