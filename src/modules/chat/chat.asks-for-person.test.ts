import { describe, expect, it } from 'vitest';
import { asksForHuman } from './chat.asks-for-person.js';

describe('asksForHuman', () => {
  it.each([
    'Can I talk to a human please',
    'I want to talk to a person',
    'Please let me speak to a human about order 981',
    'Connect me with customer service',
    'I need a real person',
    'Can I speak to someone?',
    'transfer me to an agent',
    'agent',
    'human please',
    'أريد التحدث مع موظف',
    'حولني على خدمة العملاء',
    'ابغى اكلم موظف',
    'موظف لو سمحت',
    'أريد التحدث مع أحد الموظفين',
    'أريد ممثل خدمة العملاء',
  ])('hears a request for a person in "%s"', (query) => {
    expect(asksForHuman(query)).toBe(true);
  });

  it.each([
    'Can the camera tell a human from a pet?',
    'Are humans detected at night?',
    'Does a person need an account to watch?',
    'Will the alarm go off for a person at the door?',
    'Is the agent app free?',
    'how do refunds work',
    'من هو ممثل الشركة في دبي؟',
    'هل الممثل في الإعلان مشهور؟',
    'هل موظفون الشركة يعملون يوم الجمعة؟',
    'كم عدد موظفي الشركة؟',
  ])('hears no request in the near miss "%s"', (query) => {
    expect(asksForHuman(query)).toBe(false);
  });
});
