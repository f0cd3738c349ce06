/** Request and response schemas of the workflows family (`/api/public/workflows`). */
import { Type, type Static } from '@sinclair/typebox';
import { Page, SkipLimit, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { QUERY_TYPES } from '../support-queries/index.js';

/** Bodies refuse unknown fields (a 400 naming them): ids, tenancy and timestamps are never input. */
const closed = { additionalProperties: false } as const;

export const MAX_STEPS = 20;

const LanguageCode = Type.String({
  pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$',
  description: 'ISO 639 code, e.g. en, ar',
});

const StepName = Type.String({
  minLength: 1,
  maxLength: 80,
  pattern: '^[^\\s].*$',
  description: 'Unique in the workflow; the name a model router picks and the hand-off event shows.',
});

export const WhenInput = Type.Object(
  {
    query_types: Type.Optional(
      Type.Array(StringEnum(QUERY_TYPES), {
        maxItems: QUERY_TYPES.length,
        uniqueItems: true,
        description: 'Support query types (the support-queries classifier) this step answers.',
      }),
    ),
    keywords: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 50,
        uniqueItems: true,
        description: 'Words or phrases (any language) that select this step, matched case-insensitively.',
      }),
    ),
    languages: Type.Optional(
      Type.Array(LanguageCode, {
        maxItems: 20,
        uniqueItems: true,
        description: 'Languages of the questions this step answers (empty: any).',
      }),
    ),
  },
  { ...closed, description: 'When the step applies; a step with no condition applies to nothing but its name.' },
);

export const StepInput = Type.Object(
  {
    name: StepName,
    agent_id: Uuid({ description: 'An agent of your company.' }),
    when: Type.Optional(WhenInput),
  },
  closed,
);
export type StepInput = Static<typeof StepInput>;

const workflowFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ maxLength: 4000 }),
  steps: Type.Array(StepInput, { minItems: 1, maxItems: MAX_STEPS }),
  default_agent_id: Uuid({ description: 'Answers when no step applies; an agent of your company.' }),
  router: Type.String({
    minLength: 1,
    maxLength: 200,
    description: '`rules`, or `<provider>:<model>` of a configured provider that picks the step by name',
  }),
};

export const CreateWorkflowBody = Type.Object(
  {
    name: workflowFields.name,
    description: Type.Optional(workflowFields.description),
    steps: workflowFields.steps,
    default_agent_id: workflowFields.default_agent_id,
    router: Type.Optional(workflowFields.router),
  },
  closed,
);
export type CreateWorkflowBody = Static<typeof CreateWorkflowBody>;

export const UpdateWorkflowBody = Type.Partial(Type.Object(workflowFields), { minProperties: 1, ...closed });
export type UpdateWorkflowBody = Static<typeof UpdateWorkflowBody>;

export const WorkflowStep = Type.Object({
  name: Type.String(),
  agent_id: Uuid(),
  when: Type.Object({
    query_types: Type.Array(Type.String()),
    keywords: Type.Array(Type.String()),
    languages: Type.Array(Type.String()),
  }),
});

export const Workflow = Type.Object(
  {
    id: Uuid(),
    company_id: Uuid(),
    name: Type.String(),
    description: Type.String(),
    steps: Type.Array(WorkflowStep),
    default_agent_id: Uuid(),
    router: Type.String({ description: '`rules` or the model that routes' }),
    created_by: Type.Union([Uuid(), Type.Null()]),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Workflow' },
);
export type Workflow = Static<typeof Workflow>;

export const WorkflowPage = Page(Type.Ref(Workflow));

export const ListWorkflowsQuery = Type.Object({ ...SkipLimit(20, 100) });
