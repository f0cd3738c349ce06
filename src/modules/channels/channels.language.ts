/**
 * Short replies a channel sends on its own, in the customer's language: that voice notes are not
 * understood (no speech to text configured), and that the agent cannot answer just now. The
 * language is the vendor's locale when it gives one, else the one the caller's phone number's
 * country speaks when the deployment lists it, else the deployment's first language, else English.
 */

/** "en-US, ar" → ["en", "ar"]. */
function primaryLanguages(languages: string): string[] {
  return languages
    .split(',')
    .map((code) => code.trim().split('-')[0]!.toLowerCase())
    .filter((code) => code !== '');
}

const NO_VOICE: Record<string, string> = {
  en: "Sorry, I can't listen to voice notes. Please type your message.",
  ar: 'عذرًا، لا يمكنني الاستماع إلى الرسائل الصوتية. يرجى كتابة رسالتك.',
  fr: 'Désolé, je ne peux pas écouter les messages vocaux. Merci d’écrire votre message.',
  es: 'Lo siento, no puedo escuchar notas de voz. Por favor, escribe tu mensaje.',
  de: 'Entschuldigung, ich kann keine Sprachnachrichten anhören. Bitte schreiben Sie Ihre Nachricht.',
  pt: 'Desculpe, não consigo ouvir mensagens de voz. Por favor, escreva sua mensagem.',
  it: 'Mi dispiace, non posso ascoltare i messaggi vocali. Per favore, scrivi il tuo messaggio.',
  tr: 'Üzgünüm, sesli mesajları dinleyemiyorum. Lütfen mesajınızı yazın.',
  nl: 'Sorry, ik kan geen spraakberichten beluisteren. Typ alstublieft uw bericht.',
  hi: 'क्षमा करें, मैं वॉइस नोट नहीं सुन सकता। कृपया अपना संदेश लिखें।',
  id: 'Maaf, saya tidak dapat mendengarkan pesan suara. Silakan ketik pesan Anda.',
};

const UNAVAILABLE: Record<string, string> = {
  en: "Sorry, I can't answer right now. Please try again in a little while.",
  ar: 'عذرًا، لا يمكنني الرد الآن. يرجى المحاولة مرة أخرى بعد قليل.',
  fr: 'Désolé, je ne peux pas répondre pour le moment. Merci de réessayer dans un instant.',
  es: 'Lo siento, no puedo responder ahora. Inténtalo de nuevo en un momento.',
  de: 'Entschuldigung, ich kann gerade nicht antworten. Bitte versuchen Sie es gleich noch einmal.',
  pt: 'Desculpe, não consigo responder agora. Tente novamente daqui a pouco.',
  it: 'Mi dispiace, non posso rispondere ora. Riprova tra poco.',
  tr: 'Üzgünüm, şu anda yanıt veremiyorum. Lütfen biraz sonra tekrar deneyin.',
  nl: 'Sorry, ik kan nu niet antwoorden. Probeer het zo meteen opnieuw.',
  hi: 'क्षमा करें, मैं अभी उत्तर नहीं दे सकता। कृपया थोड़ी देर बाद फिर से प्रयास करें।',
  id: 'Maaf, saya tidak dapat menjawab sekarang. Silakan coba lagi sebentar lagi.',
};

/** Calling codes whose country's first language is one above (longest prefix first). */
const CALLING_CODES: [string, string][] = [
  ['966', 'ar'],
  ['971', 'ar'],
  ['965', 'ar'],
  ['974', 'ar'],
  ['973', 'ar'],
  ['968', 'ar'],
  ['962', 'ar'],
  ['961', 'ar'],
  ['963', 'ar'],
  ['964', 'ar'],
  ['967', 'ar'],
  ['970', 'ar'],
  ['212', 'ar'],
  ['213', 'ar'],
  ['216', 'ar'],
  ['218', 'ar'],
  ['249', 'ar'],
  ['351', 'pt'],
  ['20', 'ar'],
  ['33', 'fr'],
  ['32', 'fr'],
  ['34', 'es'],
  ['52', 'es'],
  ['54', 'es'],
  ['56', 'es'],
  ['57', 'es'],
  ['51', 'es'],
  ['49', 'de'],
  ['43', 'de'],
  ['41', 'de'],
  ['55', 'pt'],
  ['39', 'it'],
  ['90', 'tr'],
  ['31', 'nl'],
  ['91', 'hi'],
  ['62', 'id'],
  ['44', 'en'],
  ['1', 'en'],
  ['61', 'en'],
  ['64', 'en'],
];

export function languageOf(options: {
  locale?: string | null;
  phone?: string | null;
  deploymentLanguages: string;
}): string {
  const listed = primaryLanguages(options.deploymentLanguages);
  const locale = options.locale?.split(/[-_]/, 1)[0]?.toLowerCase();
  if (locale && NO_VOICE[locale]) return locale;
  if (options.phone) {
    const found = CALLING_CODES.find(([code]) => options.phone!.startsWith(code))?.[1];
    if (found && (listed.length === 0 || listed.includes(found))) return found;
  }
  return listed.find((code) => NO_VOICE[code]) ?? 'en';
}

export const noVoiceReply = (language: string) => NO_VOICE[language] ?? NO_VOICE.en!;
export const unavailableReply = (language: string) => UNAVAILABLE[language] ?? UNAVAILABLE.en!;
