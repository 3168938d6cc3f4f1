// The calculator page. All maths happens in Go compiled to WebAssembly
// (again.wasm, see web/wasm): this script only moves text between the
// inputs, the URL, the Go code and the page. It makes no network request
// after loading again.wasm.
'use strict';

(() => {
  const FIELDS = ['initial', 'multiplier', 'max', 'retries', 'jitter', 'deadline'];
  let defaults = {}; // each field's default, from the Go code (againDefaults)
  const JITTERS = ['none', 'full', 'equal', 'proportional', 'decorrelated'];
  const SVGNS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);

  // ruOf returns "повтор" in the genitive that follows "из n":
  // из 21 повтора, из 8 повторов, из 11 повторов.
  const ruOf = (n) => (n % 10 === 1 && n % 100 !== 11 ? 'повтора' : 'повторов');

  const TEXT = {
    en: {
      title: 'Exponential backoff calculator',
      custom: 'Custom values',
      loading: 'Loading the calculator…',
      loadFailed: 'The calculator could not start: ',
      stale: 'Fix the marked field; the results below are for the last valid input.',
      invalid: 'Fix the marked field to see the schedule.',
      yes: 'yes', no: '',
      noDeadline: 'Add a deadline to check whether the schedule fits it and to solve for a parameter that does.',
      fits: (max, dl) => `Fits: even the longest total wait, ${max}, ends within the ${dl} deadline.`,
      misses: (max, dl, within, n) => `Does not fit: the longest total wait, ${max}, exceeds the ${dl} deadline; ` +
        (within === 0 ? 'not even the first retry is sure to start in time.'
          : within === 1 ? `only the first of ${n} retries is sure to start in time.`
            : `only the first ${within} of ${n} retries are sure to start in time.`),
      p99: (p99, ok) => ` The 99th percentile, ${p99}, ${ok ? 'fits' : 'does not fit'}.`,
      targetMax: 'so that the longest total wait fits',
      targetP99: 'so that the 99th percentile fits',
      solved: (label, v) => `${label} set to ${v}.`,
      estimated: 'The mean and the percentiles of decorrelated jitter are a seeded Monte Carlo estimate.',
      copied: 'Copied.',
      copyFailed: 'Select the code and copy it by hand.',
      labels: { initial: 'Initial delay', multiplier: 'Multiplier', retries: 'Retries' },
      jitterNames: { none: 'none', full: 'full', equal: 'equal', proportional: 'proportional', decorrelated: 'decorrelated' },
      jitterHint: {
        none: 'Exactly the computed delay',
        full: 'Random between 0 and the computed delay',
        equal: 'Half the computed delay plus a random half',
        proportional: 'Random within ± the factor around the computed delay; factor in (0, 1], empty means 0.25',
        decorrelated: 'Random between the initial delay and the previous delay × multiplier',
      },
      chartEmpty: 'No retries: the first attempt is the only one.',
      moreRows: (shown, all) => `The table shows the first ${shown} of ${all} retries; the CSV and JSON downloads hold all of them.`,
      chartTotal: 'Total wait when each retry starts',
      chartDelay: 'Delay before each retry',
    },
    ru: {
      title: 'Калькулятор экспоненциальной задержки (backoff)',
      custom: 'Свои значения',
      loading: 'Загрузка калькулятора…',
      loadFailed: 'Калькулятор не запустился: ',
      stale: 'Исправьте отмеченное поле; ниже — результаты для последних верных значений.',
      invalid: 'Исправьте отмеченное поле, чтобы увидеть расписание.',
      yes: 'да', no: '',
      noDeadline: 'Добавьте дедлайн, чтобы проверить, укладывается ли в него расписание, и подобрать подходящий параметр.',
      fits: (max, dl) => `Укладывается: даже самое долгое общее ожидание, ${max}, не выходит за дедлайн ${dl}.`,
      misses: (max, dl, within, n) => `Не укладывается: самое долгое общее ожидание, ${max}, больше дедлайна ${dl}; ` +
        (within === 0 ? 'даже первый повтор может не успеть начаться.'
          : within === 1 ? `успеет начаться наверняка только первый из ${n} ${ruOf(n)}.`
            : `успеют начаться наверняка только первые ${within} из ${n} ${ruOf(n)}.`),
      p99: (p99, ok) => ` 99-й процентиль, ${p99}, ${ok ? 'укладывается' : 'не укладывается'}.`,
      targetMax: 'по самому долгому ожиданию',
      targetP99: 'по 99-му процентилю',
      solved: (label, v) => `${label}: ${v}.`,
      estimated: 'Среднее и процентили для декоррелированного джиттера — оценка методом Монте-Карло с фиксированным зерном.',
      copied: 'Скопировано.',
      copyFailed: 'Выделите код и скопируйте его вручную.',
      labels: { initial: 'Первая задержка', multiplier: 'Множитель', retries: 'Число повторов' },
      jitterNames: { none: 'нет', full: 'полный', equal: 'равный', proportional: 'пропорциональный', decorrelated: 'декоррелированный' },
      jitterHint: {
        none: 'Ровно расчётная задержка',
        full: 'Случайно от 0 до расчётной задержки',
        equal: 'Половина расчётной задержки плюс случайная половина',
        proportional: 'Случайно в пределах ± доли вокруг расчётной задержки; доля — число в (0, 1] с точкой, например 0.2; пусто — 0.25',
        decorrelated: 'Случайно от первой задержки до предыдущей × множитель',
      },
      chartEmpty: 'Повторов нет: первая попытка — единственная.',
      moreRows: (shown, all) => `В таблице первые ${shown} из ${all} повторов; в файлах CSV и JSON — все.`,
      chartTotal: 'Ожидание к началу повтора',
      chartDelay: 'Задержка перед каждым повтором',
    },
  };

  // Presets: documented defaults of widely used retry policies. Values use
  // the command line's syntax; notes say what the page cannot express.
  const PRESETS = [
    { id: 'example', name: { en: 'The worked example (500 ms × 2, cap 30 s, 8 retries)', ru: 'Разобранный пример (500 мс × 2, максимум 30 с, 8 повторов)' },
      v: { initial: '500ms', multiplier: '2', max: '30s', retries: '8', jitter: 'full', deadline: '' },
      note: { en: 'The example explained below the calculator.', ru: 'Пример, разобранный под калькулятором.' } },
    { id: 'again', name: { en: 'again (this library): backoff.Default()', ru: 'again (эта библиотека): backoff.Default()' },
      v: { initial: '500ms', multiplier: '2', max: '10s', retries: '3', jitter: 'full', deadline: '' },
      note: { en: 'backoff.Default(): 500 ms, ×2, capped at 10 s, 3 retries, full jitter. Package retry also honours Retry-After and stops at the context deadline.',
        ru: 'backoff.Default(): 500 мс, ×2, максимум 10 с, 3 повтора, полный джиттер. Пакет retry ещё соблюдает Retry-After и останавливается по дедлайну контекста.' } },
    { id: 'aws', name: { en: 'AWS SDKs, standard mode (2026), transient errors', ru: 'AWS SDK, стандартный режим (2026), временные ошибки' },
      v: { initial: '50ms', multiplier: '2', max: '20s', retries: '2', jitter: 'full', deadline: '' },
      note: { en: 'Standard retry mode as updated in 2026 (AWS_NEW_RETRIES_2026=true, the default from November 2026): 3 attempts (2 retries), full jitter over base × 2^(n−1) capped at 20 s, base 50 ms for transient errors such as timeouts. Not expressible here: throttling errors use a 1 s base (see the next preset), DynamoDB uses 25 ms and 4 attempts, a retry quota (a token bucket charging 14 tokens per retry, 5 for throttling) stops retrying during an outage, and x-amz-retry-after is honoured. Before 2026 the base varied by SDK (1 s in Go and .NET, 100 ms in JavaScript, 25 ms in C++) and the cap applied after the jitter.',
        ru: 'Стандартный режим в редакции 2026 года (AWS_NEW_RETRIES_2026=true, по умолчанию с ноября 2026): 3 попытки (2 повтора), полный джиттер в пределах [0, база × 2^(n−1)], не больше 20 с, база 50 мс для временных ошибок вроде тайм-аутов. Здесь не выразить: для ошибок ограничения частоты база 1 с (следующий пункт), у DynamoDB 25 мс и 4 попытки, квота повторов (корзина токенов: 14 за повтор, 5 за ограничение частоты) прекращает повторы во время сбоя, заголовок x-amz-retry-after соблюдается. До 2026 года база зависела от SDK (1 с в Go и .NET, 100 мс в JavaScript, 25 мс в C++), а ограничение применялось после джиттера.' } },
    { id: 'aws-throttle', name: { en: 'AWS SDKs, standard mode, throttling errors', ru: 'AWS SDK, стандартный режим, ограничение частоты' },
      v: { initial: '1s', multiplier: '2', max: '20s', retries: '2', jitter: 'full', deadline: '' },
      note: { en: 'The same standard mode for throttling errors (ThrottlingException, 429): a 1 s base, full jitter, capped at 20 s, 3 attempts. The retry quota charges only 5 tokens for these retries.',
        ru: 'Тот же стандартный режим для ошибок ограничения частоты (ThrottlingException, 429): база 1 с, полный джиттер, максимум 20 с, 3 попытки. Квота повторов списывает за такие повторы только 5 токенов.' } },
    { id: 'grpc-retry', name: { en: 'gRPC retry policy (gRFC A6 example)', ru: 'gRPC: политика повторов (пример из gRFC A6)' },
      v: { initial: '100ms', multiplier: '2', max: '1s', retries: '3', jitter: 'full', deadline: '' },
      note: { en: 'The service config example of gRFC A6: maxAttempts 4, initialBackoff 0.1s, maxBackoff 1s, backoffMultiplier 2; attempt n waits random(0, min(initialBackoff × multiplier^(n−1), maxBackoff)). Not expressible here: retry throttling (a token bucket per server), server pushback (grpc-retry-pushback-ms), the cap of 5 attempts, and retrying only the listed status codes.',
        ru: 'Пример сервисного конфига из gRFC A6: maxAttempts 4, initialBackoff 0.1s, maxBackoff 1s, backoffMultiplier 2; попытка n ждёт random(0, min(initialBackoff × multiplier^(n−1), maxBackoff)). Здесь не выразить: ограничение повторов (корзину токенов на сервер), указание сервера (grpc-retry-pushback-ms), предел в 5 попыток и повторы только для перечисленных кодов.' } },
    { id: 'grpc-conn', name: { en: 'gRPC connection backoff', ru: 'gRPC: переподключение' },
      v: { initial: '1s', multiplier: '1.6', max: '120s', retries: '10', jitter: 'proportional:0.2', deadline: '' },
      note: { en: 'gRPC\u2019s connection backoff: 1 s, ×1.6, capped at 120 s, jitter ±20 %. It reconnects forever (10 retries shown) and gives every attempt at least MIN_CONNECT_TIMEOUT = 20 s. gRPC applies the jitter after the cap, so its delays can reach 144 s; this page never exceeds the maximum.',
        ru: 'Переподключение в gRPC: 1 с, ×1,6, максимум 120 с, джиттер ±20 %. Оно повторяется бесконечно (показано 10 повторов) и даёт каждой попытке не меньше MIN_CONNECT_TIMEOUT = 20 с. gRPC добавляет джиттер после ограничения, так что задержка доходит до 144 с; здесь она никогда не превышает максимум.' } },
    { id: 'gcloud', name: { en: 'Google Cloud client libraries (typical RetrySettings)', ru: 'Клиентские библиотеки Google Cloud (типичные RetrySettings)' },
      v: { initial: '100ms', multiplier: '1.3', max: '60s', retries: '30', jitter: 'full', deadline: '600s' },
      note: { en: 'The common generated defaults: initialRetryDelay 100 ms, retryDelayMultiplier 1.3, maxRetryDelay 60 s, totalTimeout 600 s, with jittered delays. Each service and method sets its own values and retryable codes; retries go on until totalTimeout (30 shown), and each attempt also has its own RPC timeout. The Go library gax-go defaults differ: 1 s, ×2, 30 s.',
        ru: 'Типичные сгенерированные значения: initialRetryDelay 100 мс, retryDelayMultiplier 1,3, maxRetryDelay 60 с, totalTimeout 600 с, задержки со случайным разбросом. У каждого сервиса и метода свои значения и коды для повтора; повторы идут до totalTimeout (показано 30), у каждой попытки свой тайм-аут RPC. В Go-библиотеке gax-go другие значения: 1 с, ×2, 30 с.' } },
    { id: 'polly', name: { en: 'Polly (.NET) v8 retry strategy', ru: 'Polly (.NET) v8, стратегия повторов' },
      v: { initial: '2s', multiplier: '1', max: '0', retries: '3', jitter: 'none', deadline: '' },
      note: { en: 'RetryStrategyOptions defaults: MaxRetryAttempts 3, Delay 2 s, BackoffType Constant, UseJitter false, no MaxDelay. With BackoffType Exponential and UseJitter, Polly uses its own decorrelated jitter (V2), whose distribution differs from this page\u2019s decorrelated jitter.',
        ru: 'Значения RetryStrategyOptions по умолчанию: MaxRetryAttempts 3, Delay 2 с, BackoffType Constant, UseJitter false, без MaxDelay. С BackoffType Exponential и UseJitter Polly берёт свой декоррелированный джиттер (V2), распределение которого отличается от декоррелированного джиттера здесь.' } },
    { id: 'cenkalti', name: { en: 'cenkalti/backoff (Go) ExponentialBackOff', ru: 'cenkalti/backoff (Go), ExponentialBackOff' },
      v: { initial: '500ms', multiplier: '1.5', max: '60s', retries: '25', jitter: 'proportional:0.5', deadline: '15m' },
      note: { en: 'Defaults: InitialInterval 500 ms, Multiplier 1.5, MaxInterval 60 s, RandomizationFactor 0.5, MaxElapsedTime 15 min. It has no retry count (25 shown, about what 15 minutes allows), it randomises after the cap so delays reach 90 s while this page stops at the maximum, and its elapsed time includes the time the operation itself takes.',
        ru: 'Значения по умолчанию: InitialInterval 500 мс, Multiplier 1,5, MaxInterval 60 с, RandomizationFactor 0,5, MaxElapsedTime 15 мин. Числа повторов нет (показано 25 — примерно столько вмещают 15 минут), разброс добавляется после ограничения, так что задержки доходят до 90 с, а здесь не превышают максимум; в прошедшее время входит и время самой операции.' } },
    { id: 'urllib3', name: { en: 'urllib3 (Python) Retry(total=3, backoff_factor=0.5)', ru: 'urllib3 (Python), Retry(total=3, backoff_factor=0.5)' },
      v: { initial: '1s', multiplier: '2', max: '120s', retries: '2', jitter: 'none', deadline: '' },
      note: { en: 'Retry.DEFAULT allows 3 retries with backoff_factor 0, that is, no waiting at all; with backoff_factor 0.5 it sleeps 0, 1, 2, 4 … s (factor × 2^(n−1) from the second retry on, capped by backoff_max 120 s). The immediate first retry cannot be expressed here, so 2 retries are shown; backoff_jitter (default 0) adds a random 0..jitter seconds on top instead of spreading the delay.',
        ru: 'Retry.DEFAULT разрешает 3 повтора с backoff_factor 0, то есть вообще без ожидания; с backoff_factor 0,5 паузы — 0, 1, 2, 4 … с (factor × 2^(n−1) начиная со второго повтора, не больше backoff_max 120 с). Мгновенный первый повтор здесь не выразить, поэтому показано 2 повтора; backoff_jitter (по умолчанию 0) прибавляет случайные 0..jitter секунд сверху, а не разбрасывает задержку.' } },
    { id: 'curl', name: { en: 'curl --retry 5', ru: 'curl --retry 5' },
      v: { initial: '1s', multiplier: '2', max: '10m', retries: '5', jitter: 'none', deadline: '' },
      note: { en: 'curl --retry N waits 1 s, then doubles the wait up to 10 minutes, without jitter (N = 5 shown). --retry-max-time bounds the total (use the deadline), --retry-delay switches to a constant delay, and a Retry-After header takes precedence.',
        ru: 'curl --retry N ждёт 1 с, затем удваивает паузу до 10 минут, без джиттера (показано N = 5). --retry-max-time ограничивает общее время (это дедлайн), --retry-delay включает постоянную задержку, а заголовок Retry-After важнее расписания.' } },
  ];

  let lang = 'en';
  let langChosen = false;
  let last = null; // the last valid result
  let lastInputs = null; // its inputs, as JSON
  let blobs = [];
  const extra = {}; // query parameters the page keeps but has no input for (seed)

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
    // English shows the command line's names; the command line section
    // below shows them in every language.
    for (const o of $('jitter').options) if (!o.dataset.unknown) o.textContent = TEXT[l].jitterNames[o.value];
    jitterHint();
    if (typeof globalThis.againCompute === 'function') {
      update(); // messages and units in the new language
      solvedNote();
    }
  }

  // Russian units and decimal comma for backoff.Human's "1 min 32 s" (and
  // the chart's "200 d").
  const RU_UNITS = { ms: 'мс', s: 'с', min: 'мин', h: 'ч', d: 'дн.' };
  function human(s) {
    if (lang !== 'ru' || !s) return s;
    if (s.endsWith('more than 292 years')) return s.replace('more than 292 years', 'больше 292 лет');
    return s.split(' ').map((w) => RU_UNITS[w] || w.replace('.', ',')).join(' ');
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

  // applyValues fills every field from v, with the default where v has none.
  function applyValues(v) {
    for (const f of FIELDS) setField(f, v[f] ?? defaults[f] ?? '');
  }

  function writeURL(v) {
    const q = new URLSearchParams();
    for (const f of FIELDS) if (v[f] !== undefined && v[f] !== '') q.set(f, v[f]);
    if (v.target) q.set('target', v.target);
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
    if (params.get('target')) $('target').value = params.get('target') === 'p99' ? 'p99' : 'max';
    return { v, params };
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
    $('preset-note').textContent = p ? p.note[lang] : '';
  }

  function syncPreset(v) {
    const p = PRESETS.find((x) => FIELDS.every((f) => (x.v[f] || '') === (v[f] || '')));
    $('preset').value = p ? p.id : '';
    presetNote();
  }

  function jitterHint() {
    $('jitter-hint').textContent = TEXT[lang].jitterHint[$('jitter').value] || '';
  }

  // ---- computing ----
  function update() {
    const v = readInputs();
    writeURL(v);
    syncPreset(v);
    const text = JSON.stringify(v);
    const r = JSON.parse(globalThis.againCompute(text));
    showErrors(r.errors || {});
    if (!r.errors) {
      last = r;
      lastInputs = text;
      render(r);
    }
    return r;
  }

  function showErrors(errs) {
    let any = false;
    for (const f of FIELDS) {
      const msg = errs[f] || '';
      $(f + '-err').textContent = msg;
      const inputs = f === 'jitter' ? [$('jitter'), $('factor')] : [$(f)];
      for (const el of inputs) {
        if (msg) el.setAttribute('aria-invalid', 'true');
        else el.removeAttribute('aria-invalid');
      }
      any = any || !!msg;
    }
    const other = Object.keys(errs).filter((k) => !FIELDS.includes(k)).map((k) => errs[k]);
    $('other-err').textContent = other.join(' ');
    any = any || other.length > 0;
    $('results').classList.toggle('stale', any && !!last);
    const st = $('status');
    st.classList.toggle('stale', any);
    st.textContent = !any ? '' : last ? TEXT[lang].stale : TEXT[lang].invalid;
  }

  function render(r) {
    const t = TEXT[lang];
    $('results').hidden = false;
    // Totals.
    for (const k of ['min', 'mean', 'max', 'p50', 'p90', 'p99']) $('t-' + k).textContent = human(r.totals[k]);
    $('estimated').textContent = r.totals.estimated ? t.estimated : '';
    // Table.
    const body = document.createDocumentFragment();
    const rows = r.rows || []; // absent, not empty, when there are no retries
    for (const row of rows) {
      const tr = document.createElement('tr');
      const cells = [String(row.retry), human(row.delay), row.capped ? t.yes : t.no,
        human(row.min), human(row.mean), human(row.max), human(row.totalMax)];
      cells.forEach((c, i) => {
        const td = document.createElement(i === 0 ? 'th' : 'td');
        if (i === 0) td.scope = 'row';
        if (i === 2 && row.capped) td.className = 'capped';
        td.textContent = c;
        tr.append(td);
      });
      body.append(tr);
    }
    $('rows').replaceChildren(body);
    $('more-rows').textContent = r.retries > rows.length ? t.moreRows(rows.length, r.retries) : '';
    // Verdict.
    const box = $('results').querySelector('.verdict-box');
    const vd = r.verdict;
    box.classList.toggle('fits', !!vd && vd.worstCaseFits);
    box.classList.toggle('misses', !!vd && !vd.worstCaseFits);
    if (!vd) {
      $('verdict').textContent = t.noDeadline;
    } else {
      const dl = human(vd.deadline);
      $('verdict').textContent = (vd.worstCaseFits ? t.fits(human(r.totals.max), dl)
        : t.misses(human(r.totals.max), dl, vd.retriesWithin, vd.retries)) + t.p99(human(r.totals.p99), vd.p99Fits);
    }
    for (const b of document.querySelectorAll('[data-solve]')) b.disabled = !vd;
    // Chart, code and downloads.
    chart(r);
    $('command').textContent = r.command;
    $('snippet').textContent = r.snippet;
    scheduleDownloads();
  }

  // ---- downloads ----
  // Writing the CSV and JSON of a long schedule costs more than the rest of
  // an update, so they are written when typing pauses, or at once when a
  // link is followed before that; always for the last valid inputs.
  const DOWNLOADS = [['dl-csv', 'csv', 'text/csv'], ['dl-json', 'json', 'application/json']];
  let downloadsFor = null; // the inputs the links hold, as JSON
  let downloadsTimer = 0;

  function scheduleDownloads() {
    clearTimeout(downloadsTimer);
    downloadsTimer = setTimeout(prepareDownloads, 300);
  }

  function prepareDownloads() {
    clearTimeout(downloadsTimer);
    if (!lastInputs || downloadsFor === lastInputs) return;
    for (const u of blobs) URL.revokeObjectURL(u);
    blobs = [];
    for (const [id, format, type] of DOWNLOADS) {
      const d = JSON.parse(globalThis.againExport(lastInputs, format));
      const u = URL.createObjectURL(new Blob([d.text || d.error || ''], { type }));
      blobs.push(u);
      $(id).href = u;
    }
    downloadsFor = lastInputs;
  }

  function el(name, attrs, text) {
    const e = document.createElementNS(SVGNS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // chart draws two panels over the same retries: the total wait so far
  // (the cumulative worst case as a line, the deadline as a dashed rule)
  // and, below, the delay before each retry (a bar from min to max with a
  // tick at the mean). Each has its own scale, so that the bars of a long
  // schedule do not flatten against its total.
  function chart(r) {
    const svg = $('chart');
    const t = TEXT[lang];
    // Draw in the svg's own pixels, so that labels keep their size on a phone.
    const W = Math.max(300, Math.round(svg.getBoundingClientRect().width) || 720);
    const small = W < 560;
    // Leave room on the left for the longest gridline label (11px text).
    const labels = [...r.chart.total.ticks, ...r.chart.delay.ticks].map((k) => human(k.label).length);
    const L = Math.max(40, Math.ceil(Math.max(0, ...labels) * 6.4) + 12), R = 12, T = 22, gap = 30, B = 24;
    const h1 = small ? 140 : 180, h2 = small ? 100 : 120;
    const H = T + h1 + gap + h2 + B;
    const pw = W - L - R;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const nodes = [];
    const bars = r.bars || [];
    const n = bars.length;
    const step = pw / Math.max(n, 1);
    const xs = (i) => L + step * (i + 0.5);

    function panel(scale, top, height, title) {
      const y = (ms) => top + height - (Math.min(ms, scale.top) / Math.max(scale.top, 1e-9)) * height;
      for (const tick of scale.ticks) {
        nodes.push(el('line', { class: 'axis', x1: L, x2: W - R, y1: y(tick.ms), y2: y(tick.ms) }));
        nodes.push(el('text', { class: 'tick', x: L - 6, y: y(tick.ms) + 4, 'text-anchor': 'end' }, human(tick.label)));
      }
      nodes.push(el('line', { class: 'axis', x1: L, x2: W - R, y1: top + height, y2: top + height }));
      nodes.push(el('text', { class: 'panel-title', x: L, y: top - 8 }, title));
      return y;
    }

    const y1 = panel(r.chart.total, T, h1, t.chartTotal);
    const top2 = T + h1 + gap;
    const y2 = panel(r.chart.delay, top2, h2, t.chartDelay);
    if (n === 0) {
      nodes.push(el('text', { class: 'tick', x: L + pw / 2, y: T + h1 / 2, 'text-anchor': 'middle' }, t.chartEmpty));
    }
    // Bottom panel: one bar per retry (or per group of retries).
    const bw = Math.max(step * 0.6, 1);
    bars.forEach((row, i) => {
      const top = y2(row.maxMs), bottom = y2(row.minMs);
      nodes.push(el('rect', { class: 'bar', x: xs(i) - bw / 2, y: top, width: bw, height: Math.max(bottom - top, 1) }));
      nodes.push(el('line', { class: 'mean', x1: xs(i) - bw / 2, x2: xs(i) + bw / 2, y1: y2(row.meanMs), y2: y2(row.meanMs) }));
    });
    // Top panel: when each retry starts, from the earliest to the latest
    // (a band) with the mean (dotted), the worst case as a line, and the deadline.
    if (n > 0) {
      const lo = bars.map((row, i) => `${xs(i).toFixed(1)},${y1(row.totalMinMs).toFixed(1)}`);
      const hi = bars.map((row, i) => `${xs(i).toFixed(1)},${y1(row.totalMaxMs).toFixed(1)}`).reverse();
      nodes.push(el('polygon', { class: 'cum-band', points: lo.concat(hi).join(' ') }));
      nodes.push(el('polyline', { class: 'cum-mean', points: bars.map((row, i) => `${xs(i).toFixed(1)},${y1(row.totalMeanMs).toFixed(1)}`).join(' ') }));
      const pts = bars.map((row, i) => `${xs(i).toFixed(1)},${y1(row.totalMaxMs).toFixed(1)}`);
      nodes.push(el('polyline', { class: 'cum', points: pts.join(' ') }));
      if (n <= 60) bars.forEach((row, i) => nodes.push(el('circle', { class: 'cum-dot', cx: xs(i), cy: y1(row.totalMaxMs), r: 3 })));
    }
    if (r.verdict) {
      const dy = y1(r.verdict.deadlineMs);
      nodes.push(el('line', { class: 'deadline', x1: L, x2: W - R, y1: dy, y2: dy }));
      nodes.push(el('text', { class: 'deadline-label', x: W - R - 4, y: dy - 5, 'text-anchor': 'end' }, human(r.verdict.deadline)));
    }
    // Retry numbers along the bottom, at most about 12 of them.
    const every = Math.max(1, Math.ceil(n / 12));
    bars.forEach((row, i) => {
      if ((i + 1) % every !== 0 && i !== 0) return;
      const label = String(i === 0 ? row.first : row.last);
      const nearEdge = xs(i) + label.length * 3.5 > W - 2;
      nodes.push(el('text', { class: 'tick', x: nearEdge ? W - 2 : xs(i), y: H - B + 16, 'text-anchor': nearEdge ? 'end' : 'middle' }, label));
    });
    svg.replaceChildren(...nodes);
  }

  // ---- solving ----
  let solved = null; // the last solve's outcome, shown until the next edit

  function solve(param) {
    const r = JSON.parse(globalThis.againSolve(JSON.stringify(readInputs()), param));
    if (!r.error) {
      setField(r.field, r.value);
      update();
    }
    solved = r;
    solvedNote();
  }

  // solvedNote says what the last solve did, in the current language; the
  // solver's errors are again calc's messages, in English as there.
  function solvedNote() {
    const r = solved;
    $('solve-msg').textContent = !r ? '' : r.error || TEXT[lang].solved(TEXT[lang].labels[r.field], r.value);
  }

  // ---- start ----
  async function loadWasm() {
    const go = new globalThis.Go();
    const ready = new Promise((resolve) => { globalThis.againReady = resolve; });
    let inst;
    try {
      inst = (await WebAssembly.instantiateStreaming(fetch('again.wasm'), go.importObject)).instance;
    } catch (e) {
      // Hosts that send .wasm with another Content-Type: compile from bytes.
      const bytes = await (await fetch('again.wasm')).arrayBuffer();
      inst = (await WebAssembly.instantiate(bytes, go.importObject)).instance;
    }
    go.run(inst);
    await ready;
  }

  function wire() {
    $('inputs').addEventListener('submit', (e) => e.preventDefault());
    $('inputs').addEventListener('input', (e) => {
      if (e.target.id === 'preset') return;
      if (e.target.id === 'jitter') {
        $('factor-box').hidden = $('jitter').value !== 'proportional';
        jitterHint();
      }
      solved = null;
      solvedNote();
      update();
    });
    $('preset').addEventListener('change', () => {
      const p = PRESETS.find((x) => x.id === $('preset').value);
      if (!p) { presetNote(); return; }
      applyValues(p.v);
      jitterHint();
      update();
    });
    $('target').addEventListener('change', update);
    for (const b of document.querySelectorAll('[data-solve]')) b.addEventListener('click', () => solve(b.dataset.solve));
    $('lang-en').addEventListener('click', () => { langChosen = true; setLanguage('en'); writeURL(readInputs()); });
    $('lang-ru').addEventListener('click', () => { langChosen = true; setLanguage('ru'); writeURL(readInputs()); });
    for (const a of document.querySelectorAll('a.example')) {
      a.addEventListener('click', (e) => {
        e.preventDefault();
        applyValues(Object.fromEntries(new URLSearchParams(a.getAttribute('href').slice(1))));
        jitterHint();
        update();
        $('inputs').scrollIntoView({ behavior: 'smooth' });
        $('initial').focus({ preventScroll: true });
      });
    }
    let resizing = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(resizing);
      resizing = requestAnimationFrame(() => { if (last) chart(last); });
    });
    // A click follows the link after its listeners ran: fill it first.
    for (const [id] of DOWNLOADS) $(id).addEventListener('click', prepareDownloads);
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
    $('status').replaceChildren(TEXT[lang].loading);
    try {
      await loadWasm();
    } catch (e) {
      $('status').textContent = TEXT[lang].loadFailed + e;
      return;
    }
    // An empty field means the default, as an absent flag of again calc does.
    defaults = JSON.parse(globalThis.againDefaults());
    for (const f of FIELDS) if (f !== 'jitter') $(f).placeholder = defaults[f] || '';
    for (const f of FIELDS) if (!(f in v)) setField(f, defaults[f] || '');
    jitterHint();
    $('status').textContent = '';
    update();
    performance.mark('again-first-table');
    document.body.dataset.ready = 'true';
  }

  main();
})();
