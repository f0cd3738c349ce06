/**
 * A second held-out set for bench/answers/run.ts (`--set fresh`): the help centre of a chain of
 * fitness clubs, a kind of company the support lexicon was not written for, with questions
 * written without consulting the lexicon or the responder's rules. Nothing here is tuned on: it
 * measures how far the vocabulary bridging and the found decision carry to another help centre.
 * Same layout as help-centre.ts; every article is in the held-out split.
 */
import type { Article, Question } from './help-centre.js';

export const FRESH_ARTICLES: Article[] = [
  {
    id: 'gym-hours',
    language: 'en',
    split: 'held-out',
    title: 'Opening hours',
    text: 'Our clubs are open from 5:30 am to 11 pm on weekdays and from 7 am to 9 pm at weekends. On public holidays the clubs close at 6 pm. Members with a Premium plan can enter the 24-hour zone at any time with their membership card.',
  },
  {
    id: 'freeze',
    language: 'en',
    split: 'held-out',
    title: 'Pausing your membership',
    text: 'You can freeze your membership for 1 to 3 months per year, for example during travel or after an injury. A freeze costs 5 GBP per month and must be requested at least 7 days before your next billing date. During a freeze you cannot visit the clubs or book classes.',
  },
  {
    id: 'classes',
    language: 'en',
    split: 'held-out',
    title: 'Booking classes',
    text: 'Classes can be booked in the app up to 7 days in advance. If you cannot attend, cancel at least 2 hours before the start; a missed class without cancellation blocks new bookings for 48 hours. Each class has a waiting list of 10 places.',
  },
  {
    id: 'guests',
    language: 'en',
    split: 'held-out',
    title: 'Bringing a guest',
    text: 'Members can bring a guest 4 times a month. Guests must be at least 16 years old and show a photo ID at reception. The guest pass is free with the Premium plan and costs 10 GBP with the Standard plan.',
  },
  {
    id: 'personal-training',
    language: 'en',
    split: 'held-out',
    title: 'Personal training',
    text: 'Personal training sessions last 60 minutes and are booked directly with a trainer at your club. A pack of 10 sessions costs 350 GBP and is valid for 6 months. Your first session with a trainer includes a free body composition scan.',
  },
  {
    id: 'lockers',
    language: 'en',
    split: 'held-out',
    title: 'Lockers and lost property',
    text: 'Day lockers lock with a 4-digit code you choose; they are emptied every night at closing time. Items left behind are kept at reception for 30 days and then donated to charity. Monthly lockers can be rented for 15 GBP.',
  },
  {
    id: 'leaving',
    language: 'en',
    split: 'held-out',
    title: 'Ending your membership',
    text: "To end your membership, give one full calendar month's notice in the app under Account > Membership. Members on a 12-month contract can only leave early if they move more than 25 miles from a club, with proof of address.",
  },
  {
    id: 'ramadan-hours',
    language: 'ar',
    split: 'held-out',
    title: 'ساعات العمل في شهر رمضان',
    text: 'خلال شهر رمضان تفتح الأندية من الساعة 10 صباحاً حتى 2 ليلاً. تغلق منطقة السباحة قبل الإفطار بساعة. الحصص الجماعية تقام بعد صلاة التراويح فقط.',
  },
  {
    id: 'children',
    language: 'ar',
    split: 'held-out',
    title: 'الأطفال في النادي',
    text: 'يمكن للأعضاء إحضار أطفالهم من عمر 6 إلى 15 سنة إلى منطقة الأطفال. تتوفر منطقة الأطفال يومياً من 4 عصراً حتى 8 مساءً. يجب أن يبقى أحد الوالدين داخل النادي طوال الوقت.',
  },
  {
    id: 'parking',
    language: 'ar',
    split: 'held-out',
    title: 'مواقف السيارات',
    text: 'مواقف السيارات مجانية للأعضاء لمدة 3 ساعات عند تسجيل رقم اللوحة في الاستقبال. بعد 3 ساعات تُحسب رسوم 5 ريالات لكل ساعة.',
  },
];

const q = (article: string, kind: 'lexical' | 'reworded', text: string, ...facts: string[]): Question => ({
  text,
  kind,
  article,
  facts,
});

export const FRESH_QUESTIONS: Question[] = [
  q('gym-hours', 'lexical', 'What are the opening hours on weekdays?', '5:30 am to 11 pm'),
  q('gym-hours', 'reworded', 'How late can I work out on a Saturday?', '9 pm'),
  q('gym-hours', 'reworded', 'Are you open on bank holidays?', '6 pm'),
  q('freeze', 'lexical', 'How long can I freeze my membership?', '1 to 3 months'),
  q('freeze', 'reworded', "I'm going abroad for two months, can I put my subscription on hold?", '1 to 3 months'),
  q('freeze', 'reworded', "What does it cost to suspend my plan while I'm injured?", '5 GBP'),
  q('classes', 'lexical', 'How far in advance can classes be booked?', '7 days'),
  q('classes', 'reworded', "What happens if I don't show up to a yoga session?", '48 hours'),
  q('classes', 'reworded', 'Can I reserve a spin class a week ahead?', '7 days'),
  q('guests', 'lexical', 'How many times a month can I bring a guest?', '4 times a month'),
  q('guests', 'reworded', 'Can my friend come and train with me?', '4 times a month'),
  q('guests', 'reworded', 'Does my mate need identification to get in?', 'photo ID'),
  q('personal-training', 'lexical', 'How long is a personal training session?', '60 minutes'),
  q('personal-training', 'reworded', "What's the price of one-to-one coaching?", '350 GBP'),
  q('personal-training', 'reworded', 'When do my PT sessions run out?', '6 months'),
  q('lockers', 'lexical', 'How long are lost items kept at reception?', '30 days'),
  q('lockers', 'reworded', 'I left my headphones at the gym, what happens to them?', '30 days'),
  q('lockers', 'reworded', 'Can I keep my stuff at the club all the time?', '15 GBP'),
  q('leaving', 'lexical', 'How much notice do I need to give to end my membership?', 'one full calendar month'),
  q('leaving', 'reworded', 'I want to quit the gym, how do I get out of my contract?', 'calendar month'),
  q('leaving', 'reworded', "I'm relocating to another city, can I leave before my year is up?", '25 miles'),
  q('ramadan-hours', 'lexical', 'ما ساعات عمل الأندية خلال شهر رمضان؟', '10 صباحاً'),
  q('ramadan-hours', 'reworded', 'متى يفتح النادي في رمضان؟', '10 صباحاً'),
  q('ramadan-hours', 'reworded', 'هل أقدر أسبح وقت الفطور في رمضان؟', 'قبل الإفطار بساعة'),
  q('children', 'lexical', 'من أي عمر يمكن إحضار الأطفال إلى منطقة الأطفال؟', '6 إلى 15'),
  q('children', 'reworded', 'هل يسمح بدخول ابني عمره 8 سنوات؟', '6 إلى 15'),
  q('children', 'reworded', 'وين أخلي عيالي وأنا أتمرن؟', 'منطقة الأطفال'),
  q('parking', 'lexical', 'كم ساعة مواقف السيارات مجانية للأعضاء؟', '3 ساعات'),
  q('parking', 'reworded', 'هل الباركنق ببلاش؟', 'مجانية'),
  q('parking', 'reworded', 'أوقف سيارتي كم ساعة بدون ما أدفع؟', '3 ساعات'),
];

const none = (text: string): Question => ({ text, kind: 'unanswerable', article: null, facts: [], split: 'held-out' });

export const FRESH_UNANSWERABLE: Question[] = [
  none('Do you have a sauna at every club?'),
  none('Can I pay for my membership in cash?'),
  none('Is there a student discount?'),
  none('Are dogs allowed in the club?'),
  none('Do you sell protein shakes at the bar?'),
  none('هل يوجد مسبح للنساء فقط؟'),
  none('هل تقدمون خصم للطلاب؟'),
  none('هل يمكن الدفع نقداً في الاستقبال؟'),
];
