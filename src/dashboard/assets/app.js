// Progressive enhancement only: every page works without this file.

// Copy buttons: <button data-copy-target="input-id">.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy-target]') : null;
  if (button === null) return;
  const target = document.getElementById(button.getAttribute('data-copy-target'));
  if (target === null) return;
  const text = 'value' in target ? target.value : target.textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Clipboard access can be refused (plain HTTP off localhost); selecting lets the user copy.
    if (typeof target.select === 'function') target.select();
    return;
  }
  const label = button.textContent;
  button.textContent = 'Copied';
  setTimeout(() => {
    button.textContent = label;
  }, 1500);
});

// Destructive forms ask first: <form data-confirm="Delete this webhook?">.
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  const question = form.getAttribute('data-confirm');
  if (question && !window.confirm(question)) event.preventDefault();
});

// Live number status: pages with <main data-status-source="/numbers/status.json"> refresh the
// badges marked data-number-status="num_…" every few seconds, and the health cards' time the
// status has held since (data-status-since="num_…"), written as the server's Time writes it.
const statusSource = document.querySelector('[data-status-source]');
if (statusSource !== null) {
  const url = statusSource.getAttribute('data-status-source');
  const refresh = async () => {
    try {
      const response = await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (!response.ok) return;
      const body = await response.json();
      for (const number of body.numbers) {
        for (const badge of document.querySelectorAll(`[data-number-status="${CSS.escape(number.id)}"]`)) {
          badge.textContent = number.status.replace(/_/g, ' ');
          badge.className = `badge status-${number.status}`;
        }
        for (const since of document.querySelectorAll(`[data-status-since="${CSS.escape(number.id)}"]`)) {
          const time = document.createElement('time');
          time.dateTime = number.status_since;
          time.title = number.status_since;
          time.textContent = `${number.status_since.slice(0, 10)} ${number.status_since.slice(11, 16)} UTC`;
          since.replaceChildren(time);
        }
      }
    } catch {
      // A failed refresh leaves the last known status on screen; the next one may succeed.
    }
  };
  setInterval(refresh, 5000);
}

// Linking a number (operator console): while an attempt is under way the panel carries
// data-link-state; each new QR is fetched as an image as WhatsApp rotates it, without a reload.
// When the attempt ends, the page reloads once so that its status and buttons are current.
const linkPanel = document.querySelector('[data-link-state]');
if (linkPanel !== null) {
  const stateUrl = linkPanel.getAttribute('data-link-state');
  const qrUrl = linkPanel.getAttribute('data-link-qr');
  const qrImage = document.getElementById('link-qr');
  const statusLine = document.getElementById('link-status');
  const pairingCode = document.getElementById('link-pairing-code');
  let shownVersion = Number(new URL(qrImage.src || qrUrl, location.href).searchParams.get('v') ?? 0);
  const poll = async () => {
    try {
      const response = await fetch(stateUrl, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (!response.ok) return;
      const { attempt } = await response.json();
      if (attempt === null || !attempt.active) {
        clearInterval(timer);
        location.reload();
        return;
      }
      statusLine.textContent = attempt.message;
      const showQr = attempt.method === 'qr' && attempt.qr_version > 0;
      if (showQr && attempt.qr_version !== shownVersion) {
        shownVersion = attempt.qr_version;
        qrImage.src = `${qrUrl}?v=${attempt.qr_version}`;
      }
      qrImage.hidden = !showQr;
      pairingCode.textContent = attempt.pairing_code ?? '';
      pairingCode.hidden = attempt.pairing_code === null;
    } catch {
      // The next poll may succeed; the QR on screen stays until then.
    }
  };
  const timer = setInterval(poll, 2000);
}

// A conversation's thread (<ol data-thread-source="…/thread" data-thread-version="…">) follows the
// chat without a reload: every two seconds it asks for the thread, and swaps it in when its
// version changed (a new message, a queued reply that left, an edit, a reaction). The bubbles are
// the server's own HTML, escaped there as on the page. Polling reads the shared database, so it
// sees what any node of a cluster committed (docs/adr/0073).
const thread = document.querySelector('[data-thread-source]');
if (thread !== null) {
  const source = thread.getAttribute('data-thread-source');
  const scroller = thread.parentElement;
  const atBottom = () => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
  scroller.scrollTop = scroller.scrollHeight;
  const follow = async () => {
    try {
      const response = await fetch(source, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (!response.ok) return;
      const body = await response.json();
      if (body.version === thread.getAttribute('data-thread-version')) return;
      const stick = atBottom();
      thread.innerHTML = body.html;
      thread.setAttribute('data-thread-version', body.version);
      if (stick) scroller.scrollTop = scroller.scrollHeight;
    } catch {
      // The next poll may succeed; the thread on screen stays until then.
    }
  };
  setInterval(follow, 2000);
}

// Tables on a phone: each cell is given its column's heading (data-label), so that app.css can
// lay a row out as a small card of labelled lines on a narrow screen instead of a table cut at
// its edge. Without this script the table scrolls inside its own box; the page never does.
for (const table of document.querySelectorAll('table:not(.keep-table)')) {
  const headings = Array.from(table.querySelectorAll('thead th'), (heading) => heading.textContent.trim());
  if (headings.length === 0) continue;
  table.classList.add('stackable');
  for (const row of table.querySelectorAll('tbody tr')) {
    Array.from(row.children).forEach((cell, index) => {
      if (headings[index]) cell.setAttribute('data-label', headings[index]);
    });
  }
}
