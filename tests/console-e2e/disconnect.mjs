// Disconnects the newest connected agent in the console, in headless Chromium, as its owner would.
//
// Usage: node disconnect.mjs BASE_URL EMAIL SCREENSHOT_PATH
// Environment: CHROMIUM (default /usr/bin/chromium).

import { chromium } from 'playwright-core';

const [base, email, screenshot] = process.argv.slice(2);
const PASSWORD = 'correct horse battery staple';

const watchdog = setTimeout(() => {
  console.error('disconnect: gave up after 60 s');
  process.exit(1);
}, 60_000);

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium' });
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${base}/console/sign-in`);
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/console\/keys/);
  await page.goto(`${base}/console/agents`);
  await page.screenshot({ path: screenshot, fullPage: true });
  const row = page.locator('#agents tbody tr').first();
  const name = await row.locator('td').first().textContent();
  await row.locator('form.disconnect button').click();
  await page.waitForURL(/\/console\/agents/);
  const status = await page.locator('#agents tbody tr').first().locator('td.status').textContent();
  if (status.trim() !== 'disconnected') throw new Error(`the agent reads ${status}`);
  console.log(`disconnect: ${name} disconnected from the console`);
} finally {
  clearTimeout(watchdog);
  await browser.close();
}
