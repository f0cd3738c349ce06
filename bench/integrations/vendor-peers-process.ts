/**
 * The Shopify and Slack peers of the tests, in a process of their own (as a real vendor is): the
 * bench and the service both reach them across processes. Sends {shopify, shopifyToken, slack,
 * slackToken} over IPC once listening; forgets the requests it records every second (the tests'
 * peers keep them all), so a long run does not grow the process.
 */
import { startFakeShopify } from '../../test/helpers/fake-shopify.js';
import { startFakeSlack } from '../../test/helpers/fake-slack.js';

const [shopify, slack] = await Promise.all([startFakeShopify(), startFakeSlack()]);
const forget = setInterval(() => {
  shopify.requests.length = 0;
  slack.requests.length = 0;
  slack.posted.length = 0;
}, 1000);
process.on('disconnect', () => {
  clearInterval(forget);
  void Promise.all([shopify.close(), slack.close()]).then(() => process.exit(0));
});
process.send!({ shopify: shopify.url, shopifyToken: shopify.token, slack: slack.baseUrl, slackToken: slack.token });
