// Drives an agent's OAuth consent in headless Chromium, as a person would: opens the
// authorization URL the MCP client handed over, signs in when asked (the sign-in page then goes
// on to the consent page by itself) or, the first time, accepts the operator's invite (which sets
// the password), sets the spend limit, presses Allow, and waits for the browser to leave for the
// client's redirect URI. Saves a screenshot of the consent page.
//
// Usage: node consent.mjs AUTHORIZATION_URL INVITE_URL EMAIL SCREENSHOT_PATH
// Environment: CHROMIUM (default /usr/bin/chromium).

import { chromium } from 'playwright-core';

const [authorizationUrl, inviteUrl, email, screenshot] = process.argv.slice(2);
const PASSWORD = 'correct horse battery staple';
const TIMEOUT = 15_000;

const watchdog = setTimeout(() => {
  console.error('consent: gave up after 60 s');
  process.exit(1);
}, 60_000);

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium' });
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(TIMEOUT);
  await page.goto(authorizationUrl);
  if (page.url().includes('/console/sign-in')) {
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForLoadState(), page.click('button[type=submit]')]);
    if (!(await page.locator('#consent').count())) {
      // No password yet: the invite sets it and signs in; then the authorization URL again.
      await page.goto(inviteUrl);
      await page.fill('#password', PASSWORD);
      await page.click('button[type=submit]');
      await page.waitForURL(/\/console\//);
      await page.goto(authorizationUrl);
    }
  }
  await page.waitForSelector('#consent');
  const client = await page.textContent('#client-name');
  await page.fill('#spend_cap', '2.50');
  await page.screenshot({ path: screenshot, fullPage: true });
  const redirected = page.waitForRequest((request) => request.url().includes('code='));
  await page.click('#allow');
  const arrived = await redirected;
  console.log(`consent: ${client} allowed; the browser went on to ${new URL(arrived.url()).origin}`);
} finally {
  clearTimeout(watchdog);
  await browser.close();
}
