import { describe, expect, it } from 'vitest';
import { expectedAnswer, holdsAnswer } from './chat.answer-types.js';

describe('expectedAnswer', () => {
  it.each([
    ['How many API keys can I create?', 'number'],
    ['How many days do I have to send something back?', 'duration'],
    ['How much does express shipping cost?', 'amount'],
    ["What's the price of one-to-one coaching?", 'amount'],
    ['How long is the reset link valid?', 'duration'],
    ['How often should I charge the camera?', 'duration'],
    ['When will I get my money back?', 'date'],
    ['What time does the club open on Fridays?', 'date'],
    ['Where can I download my invoice?', 'place'],
    ['Who is the CEO of your company?', 'person'],
    ['Can I pay cash on delivery?', 'yes-no'],
    ['Does night vision turn on automatically?', 'yes-no'],
    ["I'm going abroad for two months, can I put my subscription on hold?", 'yes-no'],
    ['I lost my phone, how many backup codes do I get?', 'number'],
  ])('reads "%s" as asking for a %s', (question, type) => {
    expect(expectedAnswer(question)).toBe(type);
  });

  it.each([
    ['كم سعر الشحن السريع؟', 'amount'],
    ['بكم الاشتراك الشهري؟', 'amount'],
    ['كم يوماً يستغرق توصيل الطلبات؟', 'duration'],
    ['كم من الوقت يستغرق الشحن؟', 'duration'],
    ['ما مدة الضمان؟', 'duration'],
    ['ما هي مدة الضمان؟', 'duration'],
    ['كم كاميرا يمكنني إضافتها؟', 'number'],
    ['من كم محافظة تتكون دولة العراق؟', 'number'],
    ['متى تأسست الدولة العثمانية؟', 'date'],
    ['في أي عام توفي صلاح الدين؟', 'date'],
    ['أين أقيم كأس العالم 2018؟', 'place'],
    ['وين أخلي عيالي وأنا أتمرن؟', 'place'],
    ['في أي مدينة يقع المقر؟', 'place'],
    ['من أسس الدولة العثمانية؟', 'person'],
    ['لمن يعود أصل التسمية؟', 'person'],
    ['هل يمكنني الدفع نقداً عند الاستلام؟', 'yes-no'],
  ])('reads the Arabic "%s" as asking for a %s', (question, type) => {
    expect(expectedAnswer(question)).toBe(type);
  });

  it.each([
    // No question word that names a kind of answer.
    'I forgot my password',
    'How do I reset my password?',
    'What is your return policy?',
    'Why is the picture black and white at night?',
    // Question words inside other words, or not asking: "somewhere", "whoever", "anyhow".
    'I left my headphones somewhere in the club',
    'Tell whoever is on duty that the door is broken',
    // "من" as "from", and "من هو …" asking to describe someone, not to name them.
    'من هو نجيب محفوظ؟',
    'ما هي عاصمة العراق؟',
    'كيف أعيد تعيين كلمة المرور؟',
    'لا أتذكر بيانات الدخول إلى حسابي',
  ])('expects no particular kind of answer for "%s"', (question) => {
    expect(expectedAnswer(question)).toBeNull();
  });

  it('takes the first question word that names a kind of answer', () => {
    expect(expectedAnswer('How much is it, and when will it arrive?')).toBe('amount');
    expect(expectedAnswer('When is it delivered, and how much does it cost?')).toBe('date');
  });
});

describe('holdsAnswer', () => {
  it.each([
    ['An account can create up to 10 API keys.', 'number', true],
    ['Each account has three keys.', 'number', true],
    ['You can create API keys in Settings.', 'number', false],
    ['Express shipping costs 30 SAR.', 'amount', true],
    ['The guest pass is free with the Premium plan.', 'amount', true],
    ['The guest pass comes with the Premium plan.', 'amount', false],
    ['The link expires after 30 minutes.', 'duration', true],
    ['Upgrades take effect immediately.', 'duration', true],
    ['The link expires when you use it.', 'duration', false],
    ['Clubs close at 6 pm on public holidays.', 'date', true],
    ['Refunds are issued once we receive the item.', 'date', true],
    ['Refunds go to the original card.', 'date', false],
    ['Download invoices from the Billing page.', 'place', true],
    ['The team meets in Riyadh every quarter.', 'place', true],
    ['Invoices are PDF files.', 'place', false],
    ['It was founded by Sara Haddad.', 'person', true],
    ['Ask our support team for a new code.', 'person', true],
    ['The code is sent by text message.', 'person', false],
  ] as const)('"%s" holds a %s: %s', (sentence, type, holds) => {
    expect(holdsAnswer(sentence, type)).toBe(holds);
  });

  it.each([
    ['الرابط صالح لمدة ساعة.', 'duration', true],
    ['يصل الشحن السريع خلال يومين.', 'duration', true],
    ['الرابط صالح حتى استخدامه.', 'duration', false],
    ['سعره 30 ريالاً.', 'amount', true],
    ['التوصيل مجاني للأعضاء.', 'amount', true],
    ['التوصيل متاح للأعضاء.', 'amount', false],
    ['نشبت الحرب بدايةً في أوروبا.', 'place', true],
    ['تقع الولاية في شمال القارة.', 'place', true],
    ['عاش في الولايات المتحدة الأمريكية.', 'place', true],
    ['كانت حرباً طويلة ومكلفة.', 'place', false],
    ['أسسها السلطان عثمان الأول.', 'person', true],
    ['كانت دولة قوية وواسعة.', 'person', false],
    ['تأسست الدولة عام 1299.', 'date', true],
    ['تأسست في شهر رمضان.', 'date', true],
    ['تأسست الدولة على يد قبيلة.', 'date', false],
  ] as const)('the Arabic "%s" holds a %s: %s', (sentence, type, holds) => {
    expect(holdsAnswer(sentence, type)).toBe(holds);
  });

  it('lets any statement decide a yes/no question', () => {
    expect(holdsAnswer('Sale items cannot be returned.', 'yes-no')).toBe(true);
    expect(holdsAnswer('Sale items are marked in red.', 'yes-no')).toBe(true);
  });
});
