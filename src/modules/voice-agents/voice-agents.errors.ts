/** Errors of the voice agents family (rendered as `{detail}`). */
import { AppError, AppErrors } from '../../http/errors.js';

export const VoiceAgentErrors = {
  notFound: (id: string) => AppErrors.notFound('Voice agent', id),
  invalidField: (field: string, problem: string) =>
    new AppError(400, `Invalid field '${field}': ${problem}`, 'ValidationError'),
  unknownAgent: (agentId: string) =>
    new AppError(400, `Invalid field 'main_agent_id': no agent ${agentId} in your company`, 'ValidationError'),
};
