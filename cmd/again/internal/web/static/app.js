// The calculator page. All maths and all messages come from Go compiled to
// WebAssembly (again.wasm, see web/wasm), which runs in a Web Worker
// (worker.js) so that typing never waits for it. This script moves text
// between the inputs, the URL, the worker and the page, and draws the
// chart from the numbers and labels Go gives it. It makes no network
// request after loading.
'use strict';

(() => {
  const FIELDS = ['initial', 'multiplier', 'max', 'retries', 'jitter', 'deadline', 'timeout'];
  // The policy's own fields: a preset sets these and keeps the caller's
  // deadline and timeout, which belong to the caller, not to the policy.
  const POLICY = ['initial', 'multiplier', 'max', 'retries', 'jitter'];
  let defaults = {}; // each field's default, from the Go code (againDefaults)
  const JITTERS = ['none', 'full', 'equal', 'proportional', 'decorrelated'];
  const SVGNS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  const reducedMotion = () => matchMedia('(prefers-reduced-motion: reduce)').matches;

  const TEXT = {
    en: {
      title: 'Exponential backoff calculator',
      custom: 'Custom values',
      loadFailed: 'The calculator could not start: ',
      invalid: 'Fix the marked field; the results in grey are for the last valid input.',
      invalidNone: 'Fix the marked field to see the schedule.',
      noDeadline: 'No deadline: add one to see whether the schedule fits it.',
      targetMax: 'so that the worst case fits',
      targetP99: 'so that the 99th percentile fits',
      estimated: 'estimate',
      copied: 'Copied.',
      copyFailed: 'Select the code and copy it by hand.',
      jitterNames: { none: 'none', full: 'full', equal: 'equal', proportional: 'proportional', decorrelated: 'decorrelated' },
      jitterHint: {
        none: 'Exactly the computed delay',
        full: 'Random in [0, delay]',
        equal: 'Random in [delay/2, delay]',
        proportional: 'Random in delay × [1 − f, 1 + f]; f in (0, 1], default 0.25',
        decorrelated: 'Random in [initial, previous × multiplier]',
      },
      source: 'Source', asOf: (d) => `(as of ${d})`, none: 'none', more: 'More',
      capped: 'capped',
      axisRetry: 'Retry', axisStart: 'Latest start', axisDelay: 'Delay', axisTime: 'Time since the first attempt', axisAttempt: 'Attempt', axisFailure: 'Time since the failure',
      panelTotal: 'When each retry starts', panelDelay: 'Delay before each retry',
      late: (n) => `retry ${n} may start late`,
      commandNote: 'again calc has no per-attempt timeout; the command leaves it out.',
    },
    ru: {
      title: 'Калькулятор экспоненциальной задержки (backoff)',
      custom: 'Свои значения',
      loadFailed: 'Калькулятор не запустился: ',
      invalid: 'Исправьте отмеченное поле; серым — результаты для последних верных значений.',
      invalidNone: 'Исправьте отмеченное поле, чтобы увидеть расписание.',
      noDeadline: 'Дедлайн не задан: добавьте его, чтобы проверить, укладывается ли расписание.',
      targetMax: 'по худшему случаю',
      targetP99: 'по 99-му процентилю',
      estimated: 'оценка',
      copied: 'Скопировано.',
      copyFailed: 'Выделите код и скопируйте его вручную.',
      jitterNames: { none: 'нет', full: 'полный', equal: 'равный', proportional: 'пропорциональный', decorrelated: 'декоррелированный' },
      jitterHint: {
        none: 'Ровно расчётная задержка',
        full: 'Случайно в [0, задержка]',
        equal: 'Случайно в [задержка/2, задержка]',
        proportional: 'Случайно в задержка × [1 − f, 1 + f]; f в (0, 1], по умолчанию 0.25',
        decorrelated: 'Случайно в [первая, предыдущая × множитель]',
      },
      source: 'Источник', asOf: (d) => `(по состоянию на ${d})`, none: 'нет', more: 'Подробнее',
      capped: 'потолок',
      axisRetry: 'Повтор', axisStart: 'Позднее начало', axisDelay: 'Задержка', axisTime: 'Время с первой попытки', axisAttempt: 'Попытка', axisFailure: 'Время с момента сбоя',
      panelTotal: 'Когда начинается каждый повтор', panelDelay: 'Задержка перед каждым повтором',
      late: (n) => `повтор ${n} может опоздать`,
      commandNote: 'У again calc нет тайм-аута попытки; в команде его нет.',
    },
  };

  // Presets: documented defaults of widely used retry policies, each with a
  // short note, its source and the date it was checked; the long notes
  // fold away. Values use the command line's syntax.
  const PRESETS = [
    { id: 'example', name: { en: 'The worked example (500 ms × 2, cap 30 s, 8 retries)', ru: 'Разобранный пример (500 мс × 2, максимум 30 с, 8 повторов)' },
      v: { initial: '500ms', multiplier: '2', max: '30s', retries: '8', jitter: 'full' },
      short: { en: 'The seeds’ worked example.', ru: 'Разобранный пример из исходных текстов.' }, src: '', asOf: '2026-11',
      more: { en: 'The example explained below the calculator.', ru: 'Пример, разобранный под калькулятором.' } },
    { id: 'again', name: { en: 'again (this library): backoff.Default()', ru: 'again (эта библиотека): backoff.Default()' },
      v: { initial: '500ms', multiplier: '2', max: '10s', retries: '3', jitter: 'full' },
      short: { en: 'This library’s default policy.', ru: 'Политика этой библиотеки по умолчанию.' }, src: 'https://pkg.go.dev/github.com/again-go/again/backoff#Default', asOf: '2026-11',
      more: { en: 'backoff.Default(): 500 ms, ×2, capped at 10 s, 3 retries, full jitter. Package retry also honours Retry-After and stops at the context deadline.',
        ru: 'backoff.Default(): 500 мс, ×2, максимум 10 с, 3 повтора, полный джиттер. Пакет retry ещё соблюдает Retry-After и останавливается по дедлайну контекста.' } },
    { id: 'aws', name: { en: 'AWS SDKs, standard mode (2026), transient errors', ru: 'AWS SDK, стандартный режим (2026), временные ошибки' },
      v: { initial: '50ms', multiplier: '2', max: '20s', retries: '2', jitter: 'full' },
      short: { en: 'Standard mode, 2026 edition: 3 attempts, 50 ms base, cap 20 s.', ru: 'Стандартный режим, редакция 2026: 3 попытки, база 50 мс, максимум 20 с.' }, src: 'https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html', asOf: '2026-11',
      more: { en: 'Standard retry mode as updated in 2026 (AWS_NEW_RETRIES_2026=true, the default from November 2026): 3 attempts (2 retries), full jitter over base × 2^(n−1) capped at 20 s, base 50 ms for transient errors such as timeouts. Not expressible here: throttling errors use a 1 s base (see the next preset), DynamoDB uses 25 ms and 4 attempts, a retry quota (a token bucket charging 14 tokens per retry, 5 for throttling) stops retrying during an outage, and x-amz-retry-after is honoured. Before 2026 the base varied by SDK (1 s in Go and .NET, 100 ms in JavaScript, 25 ms in C++) and the cap applied after the jitter.',
        ru: 'Стандартный режим в редакции 2026 года (AWS_NEW_RETRIES_2026=true, по умолчанию с ноября 2026): 3 попытки (2 повтора), полный джиттер в пределах [0, база × 2^(n−1)], не больше 20 с, база 50 мс для временных ошибок вроде тайм-аутов. Здесь не выразить: для ошибок ограничения частоты база 1 с (следующий пункт), у DynamoDB 25 мс и 4 попытки, квота повторов (корзина токенов: 14 за повтор, 5 за ограничение частоты) прекращает повторы во время сбоя, заголовок x-amz-retry-after соблюдается. До 2026 года база зависела от SDK (1 с в Go и .NET, 100 мс в JavaScript, 25 мс в C++), а ограничение применялось после джиттера.' } },
    { id: 'aws-throttle', name: { en: 'AWS SDKs, standard mode, throttling errors', ru: 'AWS SDK, стандартный режим, ограничение частоты' },
      v: { initial: '1s', multiplier: '2', max: '20s', retries: '2', jitter: 'full' },
      short: { en: 'Standard mode for throttling errors: 1 s base.', ru: 'Стандартный режим для ограничения частоты: база 1 с.' }, src: 'https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html', asOf: '2026-11',
      more: { en: 'The same standard mode for throttling errors (ThrottlingException, 429): a 1 s base, full jitter, capped at 20 s, 3 attempts. The retry quota charges only 5 tokens for these retries.',
        ru: 'Тот же стандартный режим для ошибок ограничения частоты (ThrottlingException, 429): база 1 с, полный джиттер, максимум 20 с, 3 попытки. Квота повторов списывает за такие повторы только 5 токенов.' } },
    { id: 'grpc-retry', name: { en: 'gRPC retry policy (gRFC A6 example)', ru: 'gRPC: политика повторов (пример из gRFC A6)' },
      v: { initial: '100ms', multiplier: '2', max: '1s', retries: '3', jitter: 'full' },
      short: { en: 'The service-config example of gRFC A6: 4 attempts.', ru: 'Пример сервисного конфига из gRFC A6: 4 попытки.' }, src: 'https://github.com/grpc/proposal/blob/master/A6-client-retries.md', asOf: '2026-11',
      more: { en: 'The service config example of gRFC A6: maxAttempts 4, initialBackoff 0.1s, maxBackoff 1s, backoffMultiplier 2; attempt n waits random(0, min(initialBackoff × multiplier^(n−1), maxBackoff)). Not expressible here: retry throttling (a token bucket per server), server pushback (grpc-retry-pushback-ms), the cap of 5 attempts, and retrying only the listed status codes.',
        ru: 'Пример сервисного конфига из gRFC A6: maxAttempts 4, initialBackoff 0.1s, maxBackoff 1s, backoffMultiplier 2; попытка n ждёт random(0, min(initialBackoff × multiplier^(n−1), maxBackoff)). Здесь не выразить: ограничение повторов (корзину токенов на сервер), указание сервера (grpc-retry-pushback-ms), предел в 5 попыток и повторы только для перечисленных кодов.' } },
    { id: 'grpc-conn', name: { en: 'gRPC connection backoff', ru: 'gRPC: переподключение' },
      v: { initial: '1s', multiplier: '1.6', max: '120s', retries: '10', jitter: 'proportional:0.2' },
      short: { en: 'Reconnects forever; 10 retries shown.', ru: 'Переподключается бесконечно; показано 10 повторов.' }, src: 'https://github.com/grpc/grpc/blob/master/doc/connection-backoff.md', asOf: '2026-11',
      more: { en: 'gRPC\u2019s connection backoff: 1 s, ×1.6, capped at 120 s, jitter ±20 %. It reconnects forever (10 retries shown) and gives every attempt at least MIN_CONNECT_TIMEOUT = 20 s. gRPC applies the jitter after the cap, so its delays can reach 144 s; this page never exceeds the maximum.',
        ru: 'Переподключение в gRPC: 1 с, ×1,6, максимум 120 с, джиттер ±20 %. Оно повторяется бесконечно (показано 10 повторов) и даёт каждой попытке не меньше MIN_CONNECT_TIMEOUT = 20 с. gRPC добавляет джиттер после ограничения, так что задержка доходит до 144 с; здесь она никогда не превышает максимум.' } },
    { id: 'gcloud', name: { en: 'Google Cloud client libraries (typical RetrySettings)', ru: 'Клиентские библиотеки Google Cloud (типичные RetrySettings)' },
      v: { initial: '100ms', multiplier: '1.3', max: '60s', retries: '30', jitter: 'full' },
      short: { en: 'Typical generated RetrySettings; retries until a 600 s total timeout.', ru: 'Типичные сгенерированные RetrySettings; повторы до общего тайм-аута 600 с.' }, src: 'https://github.com/googleapis/googleapis', asOf: '2026-11',
      more: { en: 'The common generated defaults: initialRetryDelay 100 ms, retryDelayMultiplier 1.3, maxRetryDelay 60 s, totalTimeout 600 s, with jittered delays. Each service and method sets its own values and retryable codes; retries go on until totalTimeout (30 shown), and each attempt also has its own RPC timeout. The Go library gax-go defaults differ: 1 s, ×2, 30 s.',
        ru: 'Типичные сгенерированные значения: initialRetryDelay 100 мс, retryDelayMultiplier 1,3, maxRetryDelay 60 с, totalTimeout 600 с, задержки со случайным разбросом. У каждого сервиса и метода свои значения и коды для повтора; повторы идут до totalTimeout (показано 30), у каждой попытки свой тайм-аут RPC. В Go-библиотеке gax-go другие значения: 1 с, ×2, 30 с.' } },
    { id: 'polly', name: { en: 'Polly (.NET) v8 retry strategy', ru: 'Polly (.NET) v8, стратегия повторов' },
      v: { initial: '2s', multiplier: '1', max: '0', retries: '3', jitter: 'none' },
      short: { en: 'RetryStrategyOptions defaults: 3 retries, constant 2 s.', ru: 'Значения RetryStrategyOptions по умолчанию: 3 повтора, постоянно 2 с.' }, src: 'https://www.pollydocs.org/strategies/retry.html', asOf: '2026-11',
      more: { en: 'RetryStrategyOptions defaults: MaxRetryAttempts 3, Delay 2 s, BackoffType Constant, UseJitter false, no MaxDelay. With BackoffType Exponential and UseJitter, Polly uses its own decorrelated jitter (V2), whose distribution differs from this page\u2019s decorrelated jitter.',
        ru: 'Значения RetryStrategyOptions по умолчанию: MaxRetryAttempts 3, Delay 2 с, BackoffType Constant, UseJitter false, без MaxDelay. С BackoffType Exponential и UseJitter Polly берёт свой декоррелированный джиттер (V2), распределение которого отличается от декоррелированного джиттера здесь.' } },
    { id: 'cenkalti', name: { en: 'cenkalti/backoff (Go) ExponentialBackOff', ru: 'cenkalti/backoff (Go), ExponentialBackOff' },
      v: { initial: '500ms', multiplier: '1.5', max: '60s', retries: '25', jitter: 'proportional:0.5' },
      short: { en: 'ExponentialBackOff defaults; no retry count, 25 shown.', ru: 'Значения ExponentialBackOff по умолчанию; числа повторов нет, показано 25.' }, src: 'https://pkg.go.dev/github.com/cenkalti/backoff/v5#ExponentialBackOff', asOf: '2026-11',
      more: { en: 'Defaults: InitialInterval 500 ms, Multiplier 1.5, MaxInterval 60 s, RandomizationFactor 0.5, MaxElapsedTime 15 min. It has no retry count (25 shown, about what 15 minutes allows), it randomises after the cap so delays reach 90 s while this page stops at the maximum, and its elapsed time includes the time the operation itself takes.',
        ru: 'Значения по умолчанию: InitialInterval 500 мс, Multiplier 1,5, MaxInterval 60 с, RandomizationFactor 0,5, MaxElapsedTime 15 мин. Числа повторов нет (показано 25 — примерно столько вмещают 15 минут), разброс добавляется после ограничения, так что задержки доходят до 90 с, а здесь не превышают максимум; в прошедшее время входит и время самой операции.' } },
    { id: 'urllib3', name: { en: 'urllib3 (Python) Retry(total=3, backoff_factor=0.5)', ru: 'urllib3 (Python), Retry(total=3, backoff_factor=0.5)' },
      v: { initial: '1s', multiplier: '2', max: '120s', retries: '2', jitter: 'none' },
      short: { en: 'Retry(total=3, backoff_factor=0.5); its first retry is immediate.', ru: 'Retry(total=3, backoff_factor=0.5); первый повтор — сразу.' }, src: 'https://urllib3.readthedocs.io/en/stable/reference/urllib3.util.html', asOf: '2026-11',
      more: { en: 'Retry.DEFAULT allows 3 retries with backoff_factor 0, that is, no waiting at all; with backoff_factor 0.5 it sleeps 0, 1, 2, 4 … s (factor × 2^(n−1) from the second retry on, capped by backoff_max 120 s). The immediate first retry cannot be expressed here, so 2 retries are shown; backoff_jitter (default 0) adds a random 0..jitter seconds on top instead of spreading the delay.',
        ru: 'Retry.DEFAULT разрешает 3 повтора с backoff_factor 0, то есть вообще без ожидания; с backoff_factor 0,5 паузы — 0, 1, 2, 4 … с (factor × 2^(n−1) начиная со второго повтора, не больше backoff_max 120 с). Мгновенный первый повтор здесь не выразить, поэтому показано 2 повтора; backoff_jitter (по умолчанию 0) прибавляет случайные 0..jitter секунд сверху, а не разбрасывает задержку.' } },
    { id: 'curl', name: { en: 'curl --retry 5', ru: 'curl --retry 5' },
      v: { initial: '1s', multiplier: '2', max: '10m', retries: '5', jitter: 'none' },
      short: { en: 'curl --retry 5: 1 s, doubling, up to 10 min.', ru: 'curl --retry 5: 1 с, удваивается, до 10 мин.' }, src: 'https://curl.se/docs/manpage.html#--retry', asOf: '2026-11',
      more: { en: 'curl --retry N waits 1 s, then doubles the wait up to 10 minutes, without jitter (N = 5 shown). --retry-max-time bounds the total (use the deadline), --retry-delay switches to a constant delay, and a Retry-After header takes precedence.',
        ru: 'curl --retry N ждёт 1 с, затем удваивает паузу до 10 минут, без джиттера (показано N = 5). --retry-max-time ограничивает общее время (это дедлайн), --retry-delay включает постоянную задержку, а заголовок Retry-After важнее расписания.' } },
  ];

  let lang = 'en';
  let langChosen = false;
  let last = null; // the last valid result
  let lastInputs = null; // its inputs, as JSON
  let blobs = [];
  const extra = {}; // query parameters the page keeps but has no input for (seed)

  // ---- the worker ----
  const worker = new Worker('worker.js');
  let callSeq = 0;
  const calls = new Map();
  worker.onmessage = (e) => {
    const c = calls.get(e.data.id);
    calls.delete(e.data.id);
    if (e.data.error !== undefined) c.reject(new Error(e.data.error));
    else c.resolve(e.data.result);
  };
  worker.onerror = (e) => {
    for (const c of calls.values()) c.reject(new Error(e.message || 'worker failed'));
    calls.clear();
  };
  // call runs a Go function in the worker and resolves to its JSON text.
  function call(fn, ...args) {
    return new Promise((resolve, reject) => {
      const id = ++callSeq;
      calls.set(id, { resolve, reject });
      worker.postMessage({ id, fn, args });
    });
  }
  globalThis.againCall = call; // for the browser tests

  // ---- language ----
  function pickLanguage(params) {
    const q = params.get('lang');
    if (q === 'en' || q === 'ru') { langChosen = true; return q; }
    for (const l of navigator.languages || [navigator.language || 'en']) {
      const p = String(l).toLowerCase().slice(0, 2);
      if (p === 'ru') return 'ru';
      if (p === 'en') return 'en';
    }
    return 'en';
  }

  function setLanguage(l) {
    lang = l;
    document.documentElement.lang = l;
    document.title = TEXT[l].title;
    $('lang-en').setAttribute('aria-pressed', String(l === 'en'));
    $('lang-ru').setAttribute('aria-pressed', String(l === 'ru'));
    fillPresets();
    const t = $('target');
    t.options[0].textContent = TEXT[l].targetMax;
    t.options[1].textContent = TEXT[l].targetP99;
    for (const o of $('jitter').options) if (!o.dataset.unknown) o.textContent = TEXT[l].jitterNames[o.value];
    jitterHint();
    if (ready) {
      placeholders();
      update(); // Go writes every number and message in the new language
      if (solved) solve(solved.param, solved.inputs);
    }
  }

  // ---- inputs and the URL ----
  function jitterText() {
    const kind = $('jitter').value;
    if (kind !== 'proportional') return kind;
    const f = $('factor').value.trim();
    return f === '' ? 'proportional' : 'proportional:' + f;
  }

  function readInputs() {
    const v = {};
    for (const f of FIELDS) v[f] = f === 'jitter' ? jitterText() : $(f).value.trim();
    for (const f of FIELDS) if (v[f] === '') delete v[f];
    if ($('target').value !== 'max') v.target = $('target').value;
    if ($('clients').value.trim() !== '') v.clients = $('clients').value.trim();
    Object.assign(v, extra);
    return v;
  }

  function setJitter(text) {
    const sel = $('jitter');
    const [kind, factor] = text.split(/:(.*)/s);
    for (const o of [...sel.options]) if (o.dataset.unknown) o.remove();
    if (!JITTERS.includes(kind)) {
      // Keep what the user gave, so that the error names it.
      const o = new Option(text, text);
      o.dataset.unknown = '1';
      sel.add(o);
      sel.value = text;
      $('factor').value = '';
    } else {
      sel.value = kind;
      $('factor').value = kind === 'proportional' ? (factor ?? '') : '';
    }
    $('factor-box').hidden = sel.value !== 'proportional';
  }

  function setField(f, value) {
    if (f === 'jitter') setJitter(value);
    else $(f).value = value;
  }

  function writeURL(v) {
    const q = new URLSearchParams();
    for (const f of FIELDS) if (v[f] !== undefined && v[f] !== '') q.set(f, v[f]);
    if (v.target) q.set('target', v.target);
    if (v.clients) q.set('clients', v.clients);
    for (const k of Object.keys(extra)) q.set(k, extra[k]);
    if (langChosen) q.set('lang', lang);
    const s = '?' + q.toString();
    if (s !== location.search) history.replaceState(null, '', s);
  }

  function readURL() {
    const params = new URLSearchParams(location.search);
    const v = {};
    for (const f of FIELDS) if (params.has(f)) v[f] = params.get(f);
    if (params.has('seed')) extra.seed = params.get('seed');
    if (params.has('clients')) $('clients').value = params.get('clients');
    if (params.get('target')) $('target').value = params.get('target') === 'p99' ? 'p99' : 'max';
    return { v, params };
  }

  // placeholders show what an empty field means: the default, or none.
  function placeholders() {
    for (const f of FIELDS) if (f !== 'jitter') $(f).placeholder = defaults[f] || TEXT[lang].none;
  }

  // ---- presets ----
  function fillPresets() {
    const sel = $('preset');
    const cur = sel.value;
    sel.textContent = '';
    sel.add(new Option(TEXT[lang].custom, ''));
    for (const p of PRESETS) sel.add(new Option(p.name[lang], p.id));
    sel.value = cur;
    presetNote();
  }

  function presetNote() {
    const p = PRESETS.find((x) => x.id === $('preset').value);
    const box = $('preset-note');
    box.replaceChildren();
    if (!p) return;
    const t = TEXT[lang];
    const line = document.createElement('p');
    line.append(p.short[lang] + ' ');
    if (p.src) {
      const a = document.createElement('a');
      a.href = p.src;
      a.rel = 'noreferrer noopener';
      a.textContent = t.source;
      line.append(a, ' ');
    }
    line.append(t.asOf(p.asOf));
    const more = document.createElement('details');
    const sum = document.createElement('summary');
    sum.textContent = t.more;
    const body = document.createElement('p');
    body.textContent = p.more[lang];
    more.append(sum, body);
    box.append(line, more);
  }

  // syncPreset shows the preset whose policy the inputs hold, whatever the
  // deadline and the timeout.
  function syncPreset(v) {
    const p = PRESETS.find((x) => POLICY.every((f) => (x.v[f] || '') === (v[f] || '')));
    if ($('preset').value !== (p ? p.id : '')) {
      $('preset').value = p ? p.id : '';
      presetNote();
    }
  }

  function jitterHint() {
    $('jitter-hint').textContent = TEXT[lang].jitterHint[$('jitter').value] || '';
  }

  // ---- computing ----
  // At most one computation runs in the worker; edits made meanwhile are
  // merged into the next one, so a slow schedule never queues up work.
  let ready = false;
  let running = null; // the request in the worker
  let queued = null; // the newest request not yet sent
  let idleWaiters = [];
  let pendingTimer = 0;

  function update() {
    const v = readInputs();
    writeURL(v);
    syncPreset(v);
    queued = { text: JSON.stringify(v), lang, t0: performance.now(), timeout: 'timeout' in v };
    clearTimeout(pendingTimer);
    // Mark the results as stale only when the answer takes a while, so
    // that quick edits do not flicker.
    pendingTimer = setTimeout(() => setPending(true), 120);
    document.body.dataset.busy = 'true';
    if (!running) send();
  }

  function send() {
    const req = queued;
    queued = null;
    running = req;
    call('Compute', req.text, req.lang).then((json) => {
      running = null;
      apply(JSON.parse(json), req);
      if (queued) send();
      else settle();
    }, (err) => {
      running = null;
      $('status').textContent = TEXT[lang].loadFailed + err.message;
      settle();
    });
  }

  function settle() {
    clearTimeout(pendingTimer);
    setPending(false);
    document.body.dataset.busy = 'false';
    const w = idleWaiters;
    idleWaiters = [];
    for (const f of w) f();
  }

  // againIdle resolves when the page shows the result of the last edit.
  globalThis.againIdle = () => (running || queued ? new Promise((r) => idleWaiters.push(r)) : Promise.resolve());

  function setPending(on) {
    $('calculator').classList.toggle('pending', on);
    $('pending').hidden = !on;
    $('summary').setAttribute('aria-busy', String(on));
  }

  function apply(r, req) {
    const errs = r.errors || [];
    showErrors(errs);
    if (errs.length === 0) {
      last = r;
      lastInputs = req.text;
      render(r, req);
      performance.measure('again-update', { start: req.t0 });
    }
    announce(r.announce || '');
  }

  // One live region, read out once typing pauses: the headline and the
  // verdict (or the first error), not every number on every keystroke.
  let announceTimer = 0;
  function announce(text) {
    clearTimeout(announceTimer);
    announceTimer = setTimeout(() => {
      if ($('announce').textContent !== text) $('announce').textContent = text;
    }, 700);
  }

  function showErrors(errs) {
    const byField = {};
    for (const e of errs) byField[e.field] = e.text;
    for (const f of FIELDS) {
      const msg = byField[f] || '';
      $(f + '-err').textContent = msg;
      const inputs = f === 'jitter' ? [$('jitter'), $('factor')] : [$(f)];
      for (const el of inputs) {
        if (msg) el.setAttribute('aria-invalid', 'true');
        else el.removeAttribute('aria-invalid');
      }
    }
    const other = errs.filter((e) => !FIELDS.includes(e.field)).map((e) => e.text);
    $('other-err').textContent = other.join(' ');
    const any = errs.length > 0;
    // Every result that no longer matches the inputs goes grey: the
    // headline and verdict, the details, the charts, the table and the code.
    $('calculator').classList.toggle('invalid', any);
    if (any) clearTimeout(stormTimer);
    $('status').classList.remove('loading');
    $('status').textContent = !any ? '' : last ? TEXT[lang].invalid : TEXT[lang].invalidNone;
  }

  function render(r, req) {
    const t = TEXT[lang];
    const s = r.summary;
    document.body.classList.add('computed');
    $('worst').textContent = s.worst;
    $('mean').textContent = s.mean;
    $('mean-est').hidden = !s.meanEstimated;
    $('mean-est').title = t.estimated;
    const vd = s.verdict;
    const verdict = $('verdict');
    verdict.className = 'verdict' + (vd ? (vd.fits ? ' fits' : ' misses') : '');
    verdict.textContent = s.noRetries || (vd ? vd.headline : t.noDeadline);
    if (s.noRetries && vd) verdict.textContent = vd.headline;
    $('verdict-detail').textContent = vd ? vd.detail : '';
    $('t-min').textContent = s.shortest;
    $('t-p50').textContent = s.p50;
    $('t-p90').textContent = s.p90;
    $('t-p99').textContent = s.p99;
    for (const id of ['t-p50', 't-p90', 't-p99']) $(id).classList.toggle('est', s.percentilesEstimated);
    $('estimated').textContent = s.estimate ? '* ' + s.estimate : '';
    $('attempts-note').textContent = s.attempts || '';
    for (const b of document.querySelectorAll('[data-solve]')) b.disabled = !vd;
    // Table.
    const body = document.createDocumentFragment();
    for (const row of r.rows || []) {
      const tr = document.createElement('tr');
      const cells = [String(row.retry), row.delay, row.totalMax, row.min, row.mean, row.max];
      cells.forEach((c, i) => {
        const td = document.createElement(i === 0 ? 'th' : 'td');
        if (i === 0) td.scope = 'row';
        td.textContent = c;
        if (i === 1 && row.capped) {
          const m = document.createElement('span');
          m.className = 'capped-mark';
          m.textContent = t.capped;
          td.prepend(m, ' ');
        }
        tr.append(td);
      });
      body.append(tr);
    }
    $('rows').replaceChildren(body);
    $('more-rows').textContent = r.moreRows || '';
    // Charts, code and downloads.
    drawCharts(r);
    $('command').textContent = r.command;
    $('command-note').textContent = req.timeout ? t.commandNote : '';
    $('snippet').textContent = r.snippet;
    scheduleDownloads();
    scheduleStorm();
  }

  // ---- the storm ----
  // Simulating the storm costs more than the rest of an update, and it is
  // further down the page: it runs when typing pauses.
  let stormFor = null; // the inputs and language the storm view shows
  let lastStorm = null; // and its result
  let stormTimer = 0;

  function scheduleStorm() {
    clearTimeout(stormTimer);
    $('storm-box').classList.add('stale');
    stormTimer = setTimeout(runStorm, 300);
  }

  async function runStorm() {
    // Only for inputs the calculator accepts: invalid ones keep the old
    // storm, greyed out with every other result.
    if ($('calculator').classList.contains('invalid')) return;
    const inputs = JSON.stringify(readInputs());
    const key = inputs + lang;
    if (stormFor === key) {
      $('storm-box').classList.remove('stale');
      return;
    }
    const r = JSON.parse(await call('Storm', inputs, lang));
    if (JSON.stringify(readInputs()) + lang !== key) return; // an edit came in meanwhile
    stormFor = key;
    lastStorm = r;
    drawStorm(r);
    $('storm-box').classList.remove('stale');
    document.body.dataset.storm = key;
  }

  // drawStorm draws the attempts per bucket: the jittered ones as filled
  // bars, the ones without jitter as outlined bars over them.
  function drawStorm(r) {
    const svg = $('storm');
    const bad = !!r.error;
    $('clients-err').textContent = bad ? r.error : '';
    if (bad) $('clients').setAttribute('aria-invalid', 'true');
    else $('clients').removeAttribute('aria-invalid');
    svg.toggleAttribute('hidden', bad);
    $('storm-legend').hidden = bad;
    $('storm-text').textContent = bad ? '' : r.text;
    $('storm-command').textContent = bad ? '' : r.command;
    if (bad) return;
    $('storm-key-flat').textContent = r.legend[0];
    $('storm-key-jit').textContent = r.legend[1];
    $('storm-key-jit-item').hidden = !r.jittered;
    const t = TEXT[lang];
    const W = Math.max(300, Math.round(svg.getBoundingClientRect().width) || 720);
    const L = 52, R = 14, T = 12, h = W < 560 ? 150 : 190, B = 40;
    const H = T + h + B, pw = W - L - R;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const nodes = [];
    const top = r.counts[r.counts.length - 1] || 1;
    const y = (n) => T + h - n / top * h;
    for (const c of r.counts) {
      nodes.push(el('line', { class: 'grid', x1: L, x2: W - R, y1: y(c), y2: y(c) }));
      nodes.push(el('text', { class: 'tick', x: L - 6, y: y(c) + 4, 'text-anchor': 'end' }, String(c)));
    }
    const n = r.shown, span = n * r.bucketMs;
    const x = (ms) => L + Math.min(ms, span) / Math.max(span, 1e-9) * pw;
    const bw = pw / Math.max(n, 1);
    r.attempts.slice(0, n).forEach((a, i) => {
      if (r.jittered && a > 0) nodes.push(el('rect', { class: 'storm-jit', x: L + i * bw, y: y(a), width: Math.max(bw - 0.5, 0.8), height: y(0) - y(a) }));
    });
    r.noJitter.slice(0, n).forEach((a, i) => {
      if (a > 0) nodes.push(el('rect', { class: 'storm-flat', x: L + i * bw + bw * 0.2, y: y(a), width: Math.max(bw * 0.6, 1), height: y(0) - y(a) }));
    });
    nodes.push(el('line', { class: 'axis', x1: L, x2: W - R, y1: y(0), y2: y(0) }));
    nodes.push(el('line', { class: 'axis', x1: L, x2: L, y1: T, y2: T + h }));
    for (const tick of r.time.ticks) {
      if (tick.ms > span) continue;
      const tx = x(tick.ms), edge = tx + tick.label.length * 3.3 > W - 2;
      nodes.push(el('text', { class: 'tick', x: edge ? W - 2 : tx, y: T + h + 16, 'text-anchor': edge ? 'end' : 'middle' }, tick.label));
    }
    nodes.push(el('text', { class: 'axis-title', x: 12, y: T + h / 2, transform: `rotate(-90 12 ${T + h / 2})`, 'text-anchor': 'middle' }, r.yTitle));
    nodes.push(el('text', { class: 'axis-title', x: L + pw / 2, y: H - 4, 'text-anchor': 'middle' }, t.axisFailure));
    svg.replaceChildren(...nodes);
  }

  // ---- downloads ----
  // Writing the CSV and JSON of a long schedule costs more than the rest of
  // an update, so they are written when typing pauses, or when a link is
  // followed before that; always for the last valid inputs.
  const DOWNLOADS = [['dl-csv', 'csv', 'text/csv'], ['dl-json', 'json', 'application/json']];
  let downloadsFor = null; // the inputs the links hold, as JSON
  let downloadsTimer = 0;

  function scheduleDownloads() {
    clearTimeout(downloadsTimer);
    downloadsTimer = setTimeout(prepareDownloads, 300);
  }

  async function prepareDownloads() {
    clearTimeout(downloadsTimer);
    const inputs = lastInputs;
    if (!inputs || downloadsFor === inputs) return;
    const files = await Promise.all(DOWNLOADS.map(([, format]) => call('Export', inputs, format)));
    if (inputs !== lastInputs) return; // an edit came in meanwhile
    for (const u of blobs) URL.revokeObjectURL(u);
    blobs = [];
    DOWNLOADS.forEach(([id, , type], i) => {
      const d = JSON.parse(files[i]);
      const u = URL.createObjectURL(new Blob([d.text || d.error || ''], { type }));
      blobs.push(u);
      $(id).href = u;
    });
    downloadsFor = inputs;
  }

  // ---- charts ----
  function el(name, attrs, text) {
    const e = document.createElementNS(SVGNS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // place maps a duration in ms to a fraction of an axis from its scale:
  // 0 at the bottom (or left), 1 at the top.
  function place(scale, ms) {
    if (scale.log) {
      const lo = Math.log(scale.bottom), hi = Math.log(scale.top);
      return (Math.log(Math.max(ms, scale.bottom)) - lo) / Math.max(hi - lo, 1e-9);
    }
    return Math.min(ms, scale.top) / Math.max(scale.top, 1e-9);
  }

  function drawCharts(r) {
    const c = r.chart;
    $('chart-text').textContent = c.text;
    const empty = c.retries === 0;
    // No retries: a sentence instead of two empty full-size charts.
    $('chart').toggleAttribute('hidden', empty); // an SVG element has no hidden property
    $('legend').hidden = empty;
    $('timeline-box').hidden = empty;
    $('chart-empty').hidden = !empty;
    $('chart-empty').textContent = empty ? c.text : '';
    for (const li of document.querySelectorAll('.legend .needs-deadline')) li.hidden = !r.summary.verdict;
    if (empty) return;
    chart(r);
    timeline(r);
  }

  // chart draws two panels over the same retries: when each retry starts
  // (the band from the earliest to the latest, the mean dotted, the worst
  // case solid with dots, the deadline dashed, the first late retry
  // crossed) and, below, the delay before each retry (a bar from min to
  // max with a line at the mean). Each panel has its own scale.
  function chart(r) {
    const svg = $('chart');
    const t = TEXT[lang];
    const c = r.chart;
    const W = Math.max(300, Math.round(svg.getBoundingClientRect().width) || 720);
    const small = W < 560;
    const labels = [...c.total.ticks, ...c.delay.ticks].map((k) => k.label.length);
    // Room on the right for the end values (12px text), on a wide screen.
    const ends = Math.max(c.worstEnd.length, c.meanEnd.length);
    const L = Math.max(40, Math.ceil(Math.max(0, ...labels) * 6.4) + 26), R = small ? 14 : Math.ceil(ends * 7) + 16, T = 24, gap = 44, B = 40;
    const h1 = small ? 150 : 190, h2 = small ? 100 : 120;
    const H = T + h1 + gap + h2 + B;
    const pw = W - L - R;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const nodes = [];
    const n = c.retries;
    // Retry r sits in the middle of its slot of the axis.
    const xr = (retry) => L + pw * (retry - 0.5) / n;

    function panel(scale, top, height, title, axis) {
      const y = (ms) => top + height - place(scale, ms) * height;
      for (const tick of scale.ticks) {
        nodes.push(el('line', { class: 'grid', x1: L, x2: W - R, y1: y(tick.ms), y2: y(tick.ms) }));
        nodes.push(el('text', { class: 'tick', x: L - 6, y: y(tick.ms) + 4, 'text-anchor': 'end' }, tick.label));
      }
      nodes.push(el('line', { class: 'axis', x1: L, x2: W - R, y1: top + height, y2: top + height }));
      nodes.push(el('line', { class: 'axis', x1: L, x2: L, y1: top, y2: top + height }));
      nodes.push(el('text', { class: 'panel-title', x: L, y: top - 9 }, title));
      nodes.push(el('text', { class: 'axis-title', x: 12, y: top + height / 2, transform: `rotate(-90 12 ${top + height / 2})`, 'text-anchor': 'middle' }, axis));
      return y;
    }

    const y1 = panel(c.total, T, h1, t.panelTotal, t.axisStart);
    const top2 = T + h1 + gap;
    const y2 = panel(c.delay, top2, h2, t.panelDelay, t.axisDelay);
    const bars = c.bars;
    // Bottom panel: one bar per retry or group of retries.
    for (const b of bars) {
      const x0 = L + pw * (b.first - 1) / n, x1 = L + pw * b.last / n;
      const w = Math.max((x1 - x0) * 0.7, 1), xm = (x0 + x1) / 2;
      const top = y2(b.maxMs), bottom = y2(b.minMs);
      nodes.push(el('rect', { class: 'bar', x: xm - w / 2, y: top, width: w, height: Math.max(bottom - top, 1.5) }));
      nodes.push(el('line', { class: 'mean', x1: xm - w / 2 - 1, x2: xm + w / 2 + 1, y1: y2(b.meanMs), y2: y2(b.meanMs) }));
    }
    // Top panel.
    const pt = (b, key) => `${xr(b.last).toFixed(1)},${y1(b[key]).toFixed(1)}`;
    const lo = bars.map((b) => pt(b, 'totalMinMs'));
    const hi = bars.map((b) => pt(b, 'totalMaxMs')).reverse();
    nodes.push(el('polygon', { class: 'cum-band', points: lo.concat(hi).join(' ') }));
    nodes.push(el('polyline', { class: 'cum-mean', points: bars.map((b) => pt(b, 'totalMeanMs')).join(' ') }));
    nodes.push(el('polyline', { class: 'cum', points: bars.map((b) => pt(b, 'totalMaxMs')).join(' ') }));
    if (bars.length <= 60) for (const b of bars) nodes.push(el('circle', { class: 'cum-dot', cx: xr(b.last), cy: y1(b.totalMaxMs), r: 3.5 }));
    const end = bars[bars.length - 1];
    // The end values, right of the lines (above them on a phone).
    const ex = small ? W - R : xr(end.last) + 8, anchor = small ? 'end' : 'start';
    const ey = y1(end.totalMaxMs), my = y1(end.totalMeanMs);
    nodes.push(el('text', { class: 'end-label', x: ex, y: small ? ey - 8 : ey + 4, 'text-anchor': anchor }, c.worstEnd));
    if (Math.abs(my - ey) > 14) nodes.push(el('text', { class: 'end-label mean-label', x: ex, y: small ? my + 16 : my + 4, 'text-anchor': anchor }, c.meanEnd));
    const v = r.summary.verdict;
    if (v) {
      const dy = y1(v.deadlineMs);
      nodes.push(el('line', { class: 'deadline', x1: L, x2: W - R, y1: dy, y2: dy }));
      nodes.push(el('text', { class: 'deadline-label', x: L + 6, y: dy - 6 }, v.deadline));
      if (c.cross > 0) {
        const b = bars.find((x) => x.last >= c.cross) || end;
        const cx = xr(b.last), cy = y1(b.totalMaxMs);
        nodes.push(el('path', { class: 'cross', d: `M${cx - 7},${cy - 7} L${cx + 7},${cy + 7} M${cx + 7},${cy - 7} L${cx - 7},${cy + 7}` }));
        // Above and left of the mark, where the rising worst-case line is
        // not; a phone has no room for it, and the legend names the mark.
        if (!small) nodes.push(el('text', { class: 'cross-label', x: Math.max(cx - 12, L + 60), y: cy - 12, 'text-anchor': cx - 12 > L + 200 ? 'end' : 'start' }, t.late(c.cross)));
      }
    }
    // Retry numbers along the bottom: 1, round numbers and the last.
    for (const k of c.retryTicks) {
      const x = xr(k);
      nodes.push(el('line', { class: 'axis', x1: x, x2: x, y1: top2 + h2, y2: top2 + h2 + 4 }));
      nodes.push(el('text', { class: 'tick', x, y: top2 + h2 + 16, 'text-anchor': 'middle' }, String(k)));
    }
    nodes.push(el('text', { class: 'axis-title', x: L + pw / 2, y: H - 4, 'text-anchor': 'middle' }, t.axisRetry));
    svg.replaceChildren(...nodes);
  }

  // timeline draws each attempt on a time axis from t = 0: a line from its
  // earliest to its latest start, a dot at the mean, and the deadline.
  function timeline(r) {
    const svg = $('timeline');
    const t = TEXT[lang];
    const c = r.chart;
    const W = Math.max(300, Math.round(svg.getBoundingClientRect().width) || 720);
    const atts = c.attempts;
    const n = atts[atts.length - 1].n;
    const L = 46, R = 16, T = 10, B = 40;
    const h = Math.min(Math.max(atts.length * 14, 90), 220);
    const H = T + h + B;
    const pw = W - L - R;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const nodes = [];
    const x = (ms) => L + place(c.total, ms) * pw;
    const y = (k) => T + (n === 1 ? h / 2 : (k - 1) / (n - 1) * h);
    for (const tick of c.total.ticks) {
      const tx = x(tick.ms), edge = tx + tick.label.length * 3.3 > W - 2;
      nodes.push(el('line', { class: 'grid', x1: tx, x2: tx, y1: T, y2: T + h }));
      nodes.push(el('text', { class: 'tick', x: edge ? W - 2 : tx, y: T + h + 16, 'text-anchor': edge ? 'end' : 'middle' }, tick.label));
    }
    nodes.push(el('line', { class: 'axis', x1: L, x2: W - R, y1: T + h, y2: T + h }));
    for (const k of c.attemptTicks) nodes.push(el('text', { class: 'tick', x: L - 8, y: y(k) + 4, 'text-anchor': 'end' }, String(k)));
    nodes.push(el('text', { class: 'axis-title', x: 12, y: T + h / 2, transform: `rotate(-90 12 ${T + h / 2})`, 'text-anchor': 'middle' }, t.axisAttempt));
    nodes.push(el('text', { class: 'axis-title', x: L + pw / 2, y: H - 4, 'text-anchor': 'middle' }, t.axisTime));
    const v = r.summary.verdict;
    if (v) nodes.push(el('line', { class: 'deadline', x1: x(v.deadlineMs), x2: x(v.deadlineMs), y1: T, y2: T + h }));
    for (const a of atts) {
      nodes.push(el('line', { class: 'span', x1: x(a.minMs), x2: Math.max(x(a.maxMs), x(a.minMs) + 1.5), y1: y(a.n), y2: y(a.n) }));
      if (atts.length <= 60) nodes.push(el('circle', { class: 'cum-dot', cx: x(a.meanMs), cy: y(a.n), r: 3 }));
    }
    svg.replaceChildren(...nodes);
  }

  // ---- solving ----
  let solved = null; // the last solve: its parameter and the inputs before it

  async function solve(param, inputs) {
    const before = inputs || JSON.stringify(readInputs());
    const r = JSON.parse(await call('Solve', before, param, lang));
    if (!inputs && !r.error) {
      setField(r.field, r.value);
      update();
    }
    solved = { param, inputs: before };
    $('solve-msg').textContent = r.error || r.note;
  }

  // ---- start ----
  function wire() {
    $('inputs').addEventListener('submit', (e) => e.preventDefault());
    $('inputs').addEventListener('input', (e) => {
      if (e.target.id === 'preset') return;
      if (e.target.id === 'jitter') {
        $('factor-box').hidden = $('jitter').value !== 'proportional';
        jitterHint();
      }
      solved = null;
      $('solve-msg').textContent = '';
      update();
    });
    $('preset').addEventListener('change', () => {
      const p = PRESETS.find((x) => x.id === $('preset').value);
      presetNote();
      if (!p) return;
      for (const f of POLICY) setField(f, p.v[f] ?? defaults[f] ?? '');
      jitterHint();
      update();
    });
    $('target').addEventListener('change', update);
    $('clients').addEventListener('input', () => { writeURL(readInputs()); scheduleStorm(); });
    for (const b of document.querySelectorAll('[data-solve]')) b.addEventListener('click', () => solve(b.dataset.solve));
    $('lang-en').addEventListener('click', () => { langChosen = true; setLanguage('en'); writeURL(readInputs()); });
    $('lang-ru').addEventListener('click', () => { langChosen = true; setLanguage('ru'); writeURL(readInputs()); });
    for (const a of document.querySelectorAll('a.example')) {
      a.addEventListener('click', (e) => {
        e.preventDefault();
        const v = Object.fromEntries(new URLSearchParams(a.getAttribute('href').slice(1)));
        for (const f of FIELDS) setField(f, v[f] ?? defaults[f] ?? '');
        jitterHint();
        update();
        $('calculator').scrollIntoView({ behavior: reducedMotion() ? 'auto' : 'smooth' });
        $('initial').focus({ preventScroll: true });
      });
    }
    let resizing = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(resizing);
      resizing = requestAnimationFrame(() => {
        if (last) drawCharts(last);
        if (lastStorm) drawStorm(lastStorm);
      });
    });
    // A link followed before its file is written: write it, then follow it.
    for (const [id] of DOWNLOADS) {
      $(id).addEventListener('click', (e) => {
        if (downloadsFor === lastInputs) return;
        e.preventDefault();
        prepareDownloads().then(() => $(id).click());
      });
    }
    $('copy-go').addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText($('snippet').textContent);
        $('copy-msg').textContent = TEXT[lang].copied;
      } catch (e) {
        const range = document.createRange();
        range.selectNodeContents($('snippet'));
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        $('copy-msg').textContent = TEXT[lang].copyFailed;
      }
    });
  }

  async function main() {
    const { v, params } = readURL();
    setLanguage(pickLanguage(params));
    for (const f of Object.keys(v)) setField(f, v[f]);
    jitterHint();
    wire();
    try {
      // An empty field means the default, as an absent flag of again calc does.
      defaults = JSON.parse(await call('Defaults'));
    } catch (e) {
      $('status').textContent = TEXT[lang].loadFailed + e.message;
      return;
    }
    ready = true;
    placeholders();
    for (const f of FIELDS) if (!(f in v)) setField(f, defaults[f] || '');
    jitterHint();
    $('status').textContent = '';
    update();
    await globalThis.againIdle();
    performance.mark('again-first-table');
    document.body.dataset.ready = 'true';
  }

  main();
})();
