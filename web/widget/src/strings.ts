/** The widget's own words, in English and Arabic (the settings' language picks; English otherwise). */
const EN = {
  open: 'Open chat',
  close: 'Close chat',
  send: 'Send',
  message: 'Your message',
  thinking: 'Thinking…',
  usingTool: 'Looking it up…',
  toolDone: 'Done: ',
  toolFailed: 'Could not finish: ',
  waiting: 'A person will answer here soon.',
  assigned: 'A person is answering you.',
  closed: 'This conversation is closed.',
  unavailable: 'This assistant is not available right now.',
  failed: 'Something went wrong. Please try again.',
  sources: 'Sources',
  you: 'You',
  assistant: 'Assistant',
  person: 'Support',
  unread: 'New message',
  conversation: 'Conversation',
};

const AR: typeof EN = {
  open: 'افتح المحادثة',
  close: 'أغلق المحادثة',
  send: 'إرسال',
  message: 'رسالتك',
  thinking: 'جارٍ التفكير…',
  usingTool: 'جارٍ البحث…',
  toolDone: 'تم: ',
  toolFailed: 'تعذّر الإكمال: ',
  waiting: 'سيجيبك أحد موظفينا هنا قريبًا.',
  assigned: 'أحد موظفينا يجيبك الآن.',
  closed: 'أُغلقت هذه المحادثة.',
  unavailable: 'المساعد غير متاح الآن.',
  failed: 'حدث خطأ. حاول مرة أخرى.',
  sources: 'المصادر',
  you: 'أنت',
  assistant: 'المساعد',
  person: 'الدعم',
  unread: 'رسالة جديدة',
  conversation: 'المحادثة',
};

export type Strings = typeof EN;

export function stringsFor(language: string): Strings {
  return /^ar\b/i.test(language) ? AR : EN;
}
