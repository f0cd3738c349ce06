/**
 * A development set for the built-in responder and the knowledge search, written for this bench
 * (not from a dataset, and not the hand-made shop of bench/chat/kb-answers.ts): the help centre of
 * a smart-home camera and a developer platform, articles in English and in Arabic, and per article
 * questions in the article's own words (lexical), the same needs in the words customers use
 * (reworded), and questions the help centre does not answer (unanswerable, in the same domain).
 *
 * Each answerable question names its article and the fact a right answer holds (any of the
 * strings, compared as the bench normalises text). The split is by article: articles whose
 * `split` is `held-out` (and their questions), and the unanswerable questions marked so, are not
 * looked at while tuning; figures are reported for both splits.
 */
export interface Article {
  id: string;
  language: 'en' | 'ar';
  split: 'dev' | 'held-out';
  title: string;
  text: string;
}

export type Kind = 'lexical' | 'reworded' | 'unanswerable';

export interface Question {
  text: string;
  kind: Kind;
  /** The article that answers it (null: unanswerable). */
  article: string | null;
  /** A right answer holds one of these. */
  facts: string[];
  /** Only for unanswerable questions (answerable ones take their article's split). */
  split?: 'dev' | 'held-out';
}

export const ARTICLES: Article[] = [
  {
    id: 'refund-timing',
    language: 'en',
    split: 'dev',
    title: 'Refunds',
    text: 'Refunds are processed within 7 business days after we approve your return request. The amount is credited to the original payment method. Refunds for annual subscriptions are prorated for the unused months.',
  },
  {
    id: 'password-reset',
    language: 'en',
    split: 'dev',
    title: 'Resetting your password',
    text: 'If you forgot your password, open the sign-in page and select Forgot password. Enter the email address of your account and we will send you a reset link. The link expires after 30 minutes.',
  },
  {
    id: 'instalments',
    language: 'en',
    split: 'held-out',
    title: 'Paying in instalments',
    text: 'Orders over 500 SAR can be paid in 4 interest-free instalments with Tabby. Choose Tabby at checkout; the first instalment is charged when you place the order and the rest every month.',
  },
  {
    id: 'api-limits',
    language: 'en',
    split: 'dev',
    title: 'API limits',
    text: 'Each API key may send up to 600 requests per minute. Requests above the limit receive HTTP status 429 with a Retry-After header. An account can create up to 10 API keys.',
  },
  {
    id: 'camera-storage',
    language: 'en',
    split: 'dev',
    title: 'Video storage',
    text: 'Recorded clips are kept in the cloud for 30 days on the Basic plan and 60 days on the Plus plan. You can download any clip from the app before it is deleted. Clips can also be stored on a microSD card of up to 256 GB.',
  },
  {
    id: 'camera-detection',
    language: 'en',
    split: 'held-out',
    title: 'Person and pet detection',
    text: 'The camera distinguishes people from animals using on-device detection. You can choose to receive alerts only for people, only for pets, or for any motion. Detection works up to 8 metres away in daylight and 5 metres at night.',
  },
  {
    id: 'battery',
    language: 'en',
    split: 'dev',
    title: 'Battery life',
    text: 'A full charge lasts about 4 months with 20 recordings a day. Charging takes about 5 hours with the supplied USB-C cable. Cold weather below 0 °C shortens battery life.',
  },
  {
    id: 'wifi-setup',
    language: 'en',
    split: 'dev',
    title: 'Connecting the camera to Wi-Fi',
    text: 'The camera connects to 2.4 GHz Wi-Fi networks only; 5 GHz networks are not supported. During setup, hold the camera about 1 metre from your router and scan the QR code shown in the app.',
  },
  {
    id: 'warranty',
    language: 'en',
    split: 'held-out',
    title: 'Warranty',
    text: 'Every camera comes with a 2-year limited warranty covering manufacturing defects. The warranty does not cover water damage from an indoor camera used outdoors, or damage from a fall. To make a claim, contact support with your order number.',
  },
  {
    id: 'cancel-subscription',
    language: 'en',
    split: 'dev',
    title: 'Cancelling your subscription',
    text: 'You can cancel your subscription at any time from Account, then Plan, then Cancel plan. Your plan stays active until the end of the current billing period, and you will not be charged again.',
  },
  {
    id: 'family-sharing',
    language: 'en',
    split: 'dev',
    title: 'Sharing access with family',
    text: 'The account owner can invite up to 5 family members from Settings, then Shared users. Invited members can watch live video and clips but cannot change the plan or delete devices.',
  },
  {
    id: 'invoices',
    language: 'en',
    split: 'held-out',
    title: 'Invoices and receipts',
    text: 'A receipt is e-mailed after every payment. You can download all invoices as PDF files from Account, then Billing history. Invoices show the VAT registration number of the company when you add it in Billing details.',
  },
  {
    id: 'delivery',
    language: 'en',
    split: 'dev',
    title: 'Delivery',
    text: 'Orders are delivered in 2 to 4 business days within Saudi Arabia and 5 to 7 business days to other GCC countries. Delivery is free for orders above 200 SAR.',
  },
  {
    id: 'two-step',
    language: 'en',
    split: 'dev',
    title: 'Two-step verification',
    text: 'Two-step verification adds a one-time code sent by SMS each time you sign in on a new device. Turn it on in Settings, then Security. If you change your phone number, update it there first.',
  },
  {
    id: 'data-export',
    language: 'en',
    split: 'held-out',
    title: 'Exporting your data',
    text: 'You can request an export of all your data from Settings, then Privacy. The export is prepared as a ZIP file and a download link is e-mailed to you within 48 hours.',
  },
  {
    id: 'night-vision',
    language: 'en',
    split: 'dev',
    title: 'Night vision',
    text: 'Night vision turns on automatically in low light using infrared LEDs. It shows a black-and-white image up to 10 metres away. Colour night vision needs the spotlight accessory.',
  },
  {
    id: 'webhooks',
    language: 'en',
    split: 'dev',
    title: 'Webhooks',
    text: 'Webhooks send an HTTP POST to your endpoint when an event happens. Failed deliveries are retried 5 times with exponential backoff over 24 hours. Each request is signed with an HMAC-SHA256 signature in the X-Signature header.',
  },
  {
    id: 'plans-pricing',
    language: 'en',
    split: 'held-out',
    title: 'Plans and prices',
    text: 'The Basic plan costs 15 SAR per month and covers one camera. The Plus plan costs 35 SAR per month and covers up to 10 cameras. Paying yearly saves two months.',
  },
  // Arabic articles
  {
    id: 'ar-refund',
    language: 'ar',
    split: 'dev',
    title: 'استرداد المبالغ',
    text: 'تتم معالجة المبالغ المستردة خلال 7 أيام عمل بعد الموافقة على طلب الإرجاع. يُعاد المبلغ إلى وسيلة الدفع الأصلية.',
  },
  {
    id: 'ar-password',
    language: 'ar',
    split: 'dev',
    title: 'إعادة تعيين كلمة المرور',
    text: 'إذا نسيت كلمة المرور، افتح صفحة تسجيل الدخول واختر نسيت كلمة المرور. سنرسل إليك رابط إعادة التعيين على بريدك الإلكتروني، وتنتهي صلاحية الرابط بعد 30 دقيقة.',
  },
  {
    id: 'ar-delivery',
    language: 'ar',
    split: 'held-out',
    title: 'التوصيل',
    text: 'يتم توصيل الطلبات خلال 2 إلى 4 أيام عمل داخل المملكة العربية السعودية. التوصيل مجاني للطلبات التي تزيد قيمتها على 200 ريال.',
  },
  {
    id: 'ar-battery',
    language: 'ar',
    split: 'dev',
    title: 'عمر البطارية',
    text: 'يدوم الشحن الكامل نحو 4 أشهر مع 20 تسجيلاً في اليوم. يستغرق الشحن نحو 5 ساعات باستخدام الكابل المرفق.',
  },
  {
    id: 'ar-cancel',
    language: 'ar',
    split: 'dev',
    title: 'إلغاء الاشتراك',
    text: 'يمكنك إلغاء اشتراكك في أي وقت من الحساب ثم الخطة ثم إلغاء الخطة. تبقى خطتك فعالة حتى نهاية فترة الفوترة الحالية ولن يتم خصم أي مبلغ بعدها.',
  },
  {
    id: 'ar-warranty',
    language: 'ar',
    split: 'held-out',
    title: 'الضمان',
    text: 'تأتي كل كاميرا بضمان محدود لمدة سنتين يغطي عيوب التصنيع. لا يشمل الضمان الأضرار الناتجة عن الماء أو السقوط.',
  },
  {
    id: 'ar-instalments',
    language: 'ar',
    split: 'dev',
    title: 'الدفع بالتقسيط',
    text: 'يمكن دفع الطلبات التي تزيد على 500 ريال على 4 أقساط بدون فوائد عبر تابي. اختر تابي عند الدفع، ويُخصم القسط الأول عند تقديم الطلب والباقي كل شهر.',
  },
  {
    id: 'ar-storage',
    language: 'ar',
    split: 'held-out',
    title: 'تخزين الفيديو',
    text: 'تُحفظ المقاطع المسجلة في السحابة لمدة 30 يوماً في الخطة الأساسية و60 يوماً في خطة بلس. يمكنك تنزيل أي مقطع من التطبيق قبل حذفه.',
  },
];

const q = (text: string, kind: Kind, article: string | null, ...facts: string[]): Question => ({
  text,
  kind,
  article,
  facts,
});

export const QUESTIONS: Question[] = [
  q('How long are refunds processed?', 'lexical', 'refund-timing', '7 business days'),
  q('When will I get my money back?', 'reworded', 'refund-timing', '7 business days'),
  q('How many days until the cash is back on my card?', 'reworded', 'refund-timing', '7 business days'),
  q('I forgot my password, what do I do?', 'lexical', 'password-reset', 'Forgot password', 'reset link'),
  q("I can't remember my login details", 'reworded', 'password-reset', 'Forgot password', 'reset link'),
  q('How long is the reset link valid?', 'reworded', 'password-reset', '30 minutes'),
  q('Can I pay in instalments?', 'lexical', 'instalments', 'Tabby', 'instalments'),
  q('Can I split the cost into smaller payments?', 'reworded', 'instalments', 'Tabby', 'instalments'),
  q('Is there a buy now pay later option?', 'reworded', 'instalments', 'Tabby'),
  q('How many requests per minute can an API key send?', 'lexical', 'api-limits', '600 requests'),
  q('How many API keys can I create?', 'lexical', 'api-limits', 'up to 10 API keys'),
  q('What happens if I go over the rate limit?', 'reworded', 'api-limits', '429'),
  q('How long are recorded clips kept in the cloud?', 'lexical', 'camera-storage', '30 days', '60 days'),
  q('For how long can I watch old videos?', 'reworded', 'camera-storage', '30 days', '60 days'),
  q('What size of memory card does the camera take?', 'reworded', 'camera-storage', '256 GB'),
  q('Can the camera tell a person from an animal?', 'lexical', 'camera-detection', 'distinguishes people from animals'),
  q('Will my cat set off the alarm?', 'reworded', 'camera-detection', 'only for people', 'pets'),
  q('How far away can it see someone?', 'reworded', 'camera-detection', '8 metres'),
  q('How long does a full charge last?', 'lexical', 'battery', '4 months'),
  q('How often do I need to recharge it?', 'reworded', 'battery', '4 months'),
  q('How long does charging take?', 'lexical', 'battery', '5 hours'),
  q('Does the camera support 5 GHz Wi-Fi networks?', 'lexical', 'wifi-setup', '2.4 GHz'),
  q('My camera will not connect to my router', 'reworded', 'wifi-setup', '2.4 GHz', '1 metre'),
  q('Which internet bands work with it?', 'reworded', 'wifi-setup', '2.4 GHz'),
  q('How long is the warranty?', 'lexical', 'warranty', '2-year'),
  q('Is water damage covered?', 'lexical', 'warranty', 'does not cover water damage'),
  q('My camera broke after it fell, will you fix it for free?', 'reworded', 'warranty', 'damage from a fall'),
  q('How do I cancel my subscription?', 'lexical', 'cancel-subscription', 'Cancel plan'),
  q('I want to stop paying every month', 'reworded', 'cancel-subscription', 'Cancel plan', 'not be charged again'),
  q(
    'If I end my membership, do I lose access right away?',
    'reworded',
    'cancel-subscription',
    'end of the current billing period',
  ),
  q('How many family members can I invite?', 'lexical', 'family-sharing', 'up to 5 family members'),
  q('Can my wife see the cameras on her phone too?', 'reworded', 'family-sharing', 'invite', 'Shared users'),
  q('Can people I share with delete devices?', 'lexical', 'family-sharing', 'cannot change the plan or delete devices'),
  q('Where can I download my invoices?', 'lexical', 'invoices', 'Billing history'),
  q('I need a bill for my accountant', 'reworded', 'invoices', 'Billing history', 'receipt'),
  q('Can you add our tax number to the invoice?', 'reworded', 'invoices', 'VAT registration number'),
  q('How long does delivery take within Saudi Arabia?', 'lexical', 'delivery', '2 to 4 business days'),
  q('When will my order arrive?', 'reworded', 'delivery', '2 to 4 business days'),
  q('Do I have to pay for shipping?', 'reworded', 'delivery', 'free for orders above 200 SAR'),
  q('How do I turn on two-step verification?', 'lexical', 'two-step', 'Settings, then Security'),
  q('How can I make my account more secure?', 'reworded', 'two-step', 'Two-step verification'),
  q('I got a new phone number, will I still get my login codes?', 'reworded', 'two-step', 'update it there first'),
  q('How do I export my data?', 'lexical', 'data-export', 'Settings, then Privacy'),
  q('Can I get a copy of everything you store about me?', 'reworded', 'data-export', 'export', 'ZIP'),
  q('How long until my data download is ready?', 'reworded', 'data-export', '48 hours'),
  q('Does night vision turn on automatically?', 'lexical', 'night-vision', 'automatically'),
  q('Can I see anything in the dark?', 'reworded', 'night-vision', 'infrared', 'Night vision'),
  q(
    'Why is the picture black and white at night?',
    'reworded',
    'night-vision',
    'black-and-white',
    'Colour night vision',
  ),
  q('How many times are failed webhook deliveries retried?', 'lexical', 'webhooks', '5 times'),
  q('What if my server is down when you send an event?', 'reworded', 'webhooks', 'retried 5 times'),
  q('How do I check that a callback really came from you?', 'reworded', 'webhooks', 'HMAC', 'X-Signature'),
  q('How much does the Plus plan cost?', 'lexical', 'plans-pricing', '35 SAR'),
  q('What is the monthly price for one camera?', 'reworded', 'plans-pricing', '15 SAR'),
  q('Is it cheaper if I pay for a whole year?', 'reworded', 'plans-pricing', 'saves two months'),
  // Arabic
  q('متى تتم معالجة المبالغ المستردة؟', 'lexical', 'ar-refund', '7 أيام عمل'),
  q('متى سأسترجع فلوسي؟', 'reworded', 'ar-refund', '7 أيام عمل'),
  q('نسيت كلمة المرور، ماذا أفعل؟', 'lexical', 'ar-password', 'نسيت كلمة المرور', 'رابط'),
  q('لا أتذكر بيانات الدخول إلى حسابي', 'reworded', 'ar-password', 'نسيت كلمة المرور', 'رابط'),
  q('كم يوماً يستغرق توصيل الطلبات؟', 'lexical', 'ar-delivery', '2 إلى 4 أيام عمل'),
  q('متى ستصلني الشحنة؟', 'reworded', 'ar-delivery', '2 إلى 4 أيام عمل'),
  q('كم يدوم الشحن الكامل للبطارية؟', 'lexical', 'ar-battery', '4 أشهر'),
  q('كل كم مرة أحتاج أن أشحن الكاميرا؟', 'reworded', 'ar-battery', '4 أشهر'),
  q('كيف يمكنني إلغاء اشتراكي؟', 'lexical', 'ar-cancel', 'إلغاء الخطة'),
  q('أريد إيقاف الدفع الشهري', 'reworded', 'ar-cancel', 'إلغاء الخطة', 'لن يتم خصم'),
  q('كم مدة الضمان؟', 'lexical', 'ar-warranty', 'سنتين'),
  q('الكاميرا وقعت وانكسرت، هل تصلحونها مجانا؟', 'reworded', 'ar-warranty', 'السقوط'),
  q('هل يمكن الدفع بالتقسيط؟', 'lexical', 'ar-instalments', 'أقساط'),
  q('هل أقدر أقسم المبلغ على دفعات؟', 'reworded', 'ar-instalments', 'أقساط'),
  q('كم مدة حفظ المقاطع في السحابة؟', 'lexical', 'ar-storage', '30 يوما'),
  q('إلى متى تبقى التسجيلات القديمة؟', 'reworded', 'ar-storage', '30 يوما'),
];

const none = (text: string, split: 'dev' | 'held-out'): Question => ({
  text,
  kind: 'unanswerable',
  article: null,
  facts: [],
  split,
});

/** In the domain, not answered by any article. */
export const UNANSWERABLE: Question[] = [
  none('Does the camera work with Apple HomeKit?', 'dev'),
  none('Can I mount the camera on a ceiling?', 'held-out'),
  none('What is the field of view of the lens?', 'dev'),
  none('Do you offer a student discount?', 'held-out'),
  none('Can I pay with PayPal?', 'dev'),
  none('Is there a desktop app for Windows?', 'held-out'),
  none('How do I rotate my API key?', 'dev'),
  none('Does the API support GraphQL?', 'held-out'),
  none('Can I record sound with the video?', 'dev'),
  none('Do you ship to Egypt?', 'held-out'),
  none('How do I change the language of the app?', 'dev'),
  none('Can I use the camera without a subscription?', 'held-out'),
  none('What is the weather in Riyadh tomorrow?', 'dev'),
  none('Is the camera waterproof enough for the rain?', 'held-out'),
  none('Can two accounts share one camera owner?', 'dev'),
  none('Who is the CEO of your company?', 'held-out'),
  none('هل تعمل الكاميرا مع أليكسا؟', 'dev'),
  none('هل يوجد خصم للطلاب؟', 'held-out'),
  none('هل يمكنني الدفع نقداً عند الاستلام؟', 'dev'),
  none('ما هي زاوية رؤية العدسة؟', 'held-out'),
  none('هل تسجل الكاميرا الصوت؟', 'dev'),
  none('من هو ممثل الشركة في دبي؟', 'held-out'),
];
