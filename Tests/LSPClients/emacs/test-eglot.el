;;; test-eglot.el --- headless Emacs: eglot with Samples/editors/emacs/sqlive-eglot.el  -*- lexical-binding: t; -*-

;; What a user of sqlive-eglot.el sees, checked in Emacs's own buffers:
;; Flymake showing SQLite's "no such table" on the table's name (the
;; database named by a directory-local `sqlive-database'), the
;; diagnostic gone once another process (the sqlite3 shell) creates the
;; table, `sqlive-run-statement' showing rows as an aligned table in
;; *sqlive*, a failing statement as a `user-error' (never a backtrace),
;; C-g stopping an endless statement in sqlive too, and a buffer whose
;; first line names another database.
;;
;; Run (Debian's Emacs 28 with elpa-eglot, or Emacs 29+ with its own eglot):
;;   SQLIVE_BIN=/path/to/sqlive SQLIVE_DIR=<an empty directory> \
;;     emacs --batch -Q -l Samples/editors/emacs/sqlive-eglot.el \
;;                      -l Tests/LSPClients/emacs/test-eglot.el
;; Exits 0 after printing PASS; otherwise prints "FAIL: ..." and exits 1.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(defconst sqlive-test-timeout 30
  "Seconds any one step may take; only a hang reaches it.")

(defconst sqlive-test-dir
  (let ((dir (getenv "SQLIVE_DIR")))
    (and dir (not (string-empty-p dir)) (file-name-as-directory (expand-file-name dir)))))

;;;; eglot under -Q
;; Emacs 29 and later have eglot built in.  Debian's Emacs 28 has it
;; from the elpa-eglot package, in /usr/share/emacs/site-lisp/elpa/eglot-*,
;; which -Q (no site-start) leaves off `load-path': activate the
;; system's ELPA packages (eglot and the newer project, xref and seq
;; it comes with), as Debian's site-start does, and nothing of the
;; user's (`package-user-dir' is a directory that does not exist).
(unless (locate-library "eglot")
  (require 'package)
  (setq package-user-dir
        (expand-file-name "no-user-elpa" (or sqlive-test-dir temporary-file-directory)))
  (setq package-directory-list
        (cl-remove-if-not #'file-directory-p
                          (list "/usr/local/share/emacs/site-lisp/elpa"
                                (format "/usr/share/emacs/%s/site-lisp/elpa" emacs-version)
                                "/usr/share/emacs/site-lisp/elpa")))
  (package-initialize))

;;;; Helpers

(define-error 'sqlive-test-failure "sqlive test failure")

(defun sqlive-test-fail (format-string &rest args)
  "Stop the test with a message made of FORMAT-STRING and ARGS."
  (signal 'sqlive-test-failure (list (apply #'format format-string args))))

(defun sqlive-test-say (format-string &rest args)
  "Print a line made of FORMAT-STRING and ARGS (on standard error)."
  (message "%s" (apply #'format format-string args)))

(defun sqlive-test-wait (what predicate &optional describe)
  "Wait until PREDICATE is non-nil, serving processes and timers meanwhile.
Fails with WHAT, and DESCRIBE's answer when given, after
`sqlive-test-timeout' seconds."
  (let ((deadline (+ (float-time) sqlive-test-timeout)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall predicate)
        (sqlive-test-fail "%s (waited %d s)%s" what sqlive-test-timeout
                          (if describe (concat "; " (funcall describe)) "")))))

(defun sqlive-test-sqlite3 (database sql)
  "Run SQL on DATABASE with the sqlite3 shell, a process of its own."
  (let* ((output (generate-new-buffer " *sqlite3*"))
         (process (make-process :name "sqlite3" :buffer output :noquery t
                                :connection-type 'pipe
                                :command (list "sqlite3" "-cmd" ".timeout 10000"
                                               database sql))))
    (sqlive-test-wait (format "sqlite3 did not finish %s" sql)
                      (lambda () (not (process-live-p process))))
    (unless (zerop (process-exit-status process))
      (sqlive-test-fail "sqlite3 failed on %s: %s" sql
                        (with-current-buffer output (buffer-string))))
    (kill-buffer output)))

(defun sqlive-test-write (path text)
  "Write TEXT to the file PATH, in UTF-8 whatever the locale."
  (let ((coding-system-for-write 'utf-8-unix))
    (with-temp-file path (insert text))))

(defun sqlive-test-diagnostics ()
  "The current buffer's Flymake diagnostics, as (TEXT BEG END TYPE) lists."
  (mapcar (lambda (d) (list (format "%s" (flymake-diagnostic-text d)) (flymake-diagnostic-beg d)
                            (flymake-diagnostic-end d) (flymake-diagnostic-type d)))
          (flymake-diagnostics)))

(defun sqlive-test-goto-line (line)
  "Put point at the start of LINE (1-based)."
  (goto-char (point-min))
  (forward-line (1- line)))

(defun sqlive-test-run-statement (line)
  "Run `sqlive-run-statement' on LINE as a user would; the *sqlive* text."
  (sqlive-test-goto-line line)
  (when-let ((old (get-buffer "*sqlive*")))
    (kill-buffer old))
  (call-interactively #'sqlive-run-statement)
  (let ((buffer (get-buffer "*sqlive*")))
    (unless buffer
      (sqlive-test-fail "sqlive-run-statement on line %d made no *sqlive* buffer" line))
    (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max)))))

(defun sqlive-test-expect-lines (text expected what)
  "Fail with WHAT unless TEXT holds the lines EXPECTED, one after another."
  (unless (string-match-p (concat "^" (regexp-quote (string-join expected "\n")) "$") text)
    (sqlive-test-fail "%s: expected the lines\n%s\nin *sqlive*:\n%s"
                      what (string-join expected "\n") text)))

(defun sqlive-test-eglot-logs ()
  "The ends of eglot's buffers (events, sqlive's standard error), for a failure."
  (mapconcat
   (lambda (buffer)
     (with-current-buffer buffer
       (format "--- %s (end):\n%s\n" (buffer-name)
               (buffer-substring-no-properties (max (point-min) (- (point-max) 4000))
                                               (point-max)))))
   (cl-remove-if-not (lambda (b) (string-prefix-p "*EGLOT" (buffer-name b))) (buffer-list))
   ""))

;;;; The test

(defun sqlive-test-main ()
  "Every step; signals `sqlive-test-failure' at the first that fails."
  (let ((bin (getenv "SQLIVE_BIN")))
    (unless (and bin (not (string-empty-p bin)) sqlive-test-dir)
      (sqlive-test-fail "set SQLIVE_BIN (the sqlive binary) and SQLIVE_DIR (an empty directory)"))
    (unless (fboundp 'sqlive-run-statement)
      (sqlive-test-fail "load Samples/editors/emacs/sqlive-eglot.el first (-l)"))
    (require 'eglot)
    (require 'flymake)
    (sqlive-test-say "Emacs %s, eglot %s" emacs-version
                     (or (ignore-errors
                           (with-temp-buffer
                             (insert-file-contents (find-library-name "eglot"))
                             (and (re-search-forward "^;; Version: \\(.*\\)$" nil t)
                                  (match-string 1))))
                         "?"))
    ;; The configuration a user writes, with sqlive's path.
    (setq sqlive-command (list bin "--lsp"))
    (setq sqlive-run-timeout sqlive-test-timeout)
    (add-hook 'sql-mode-hook #'eglot-ensure)

    (let* ((database (expand-file-name "games.sqlite" sqlive-test-dir))
           (other-database (expand-file-name "other.sqlite" sqlive-test-dir))
           (queries (expand-file-name "queries.sql" sqlive-test-dir))
           (other (expand-file-name "other.sql" sqlive-test-dir))
           ;; Characters of 2, 3 and 4 bytes (the last one, 2 UTF-16
           ;; units) before the error: eglot and sqlive must count
           ;; columns alike for the diagnostic to sit on the word.
           (first-line "SELECT 'héllo€😀' AS x FROM missing;"))
      (sqlive-test-sqlite3
       database
       (concat "CREATE TABLE players(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER);"
               "INSERT INTO players VALUES (1, 'Ann', 12), (2, 'Bob', 3);"))
      ;; The database, for every SQL file of the directory.
      (sqlive-test-write (expand-file-name ".dir-locals.el" sqlive-test-dir)
                         (format "((sql-mode . ((sqlive-database . %S))))\n" database))
      (sqlive-test-write queries
                         (concat first-line "\n"
                                 "SELECT name, score FROM players ORDER BY score DESC;\n"
                                 "INSERT INTO players(id, name) VALUES (1, 'Dup');\n"
                                 ;; A statement that never ends.
                                 "SELECT count(*) FROM (WITH RECURSIVE c(x) AS "
                                 "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c);\n"))

      ;; 1. Open the file: sql-mode, the directory's database, eglot.
      (find-file queries)
      (unless (eq major-mode 'sql-mode)
        (sqlive-test-fail "%s opened in %s, not sql-mode" queries major-mode))
      (unless (equal sqlive-database database)
        (sqlive-test-fail "the directory-local sqlive-database is %S, not %S"
                          sqlive-database database))
      ;; `eglot-ensure' (from `sql-mode-hook') connects after the
      ;; command that opened the file: run that hook as the command loop would.
      (run-hooks 'post-command-hook)
      (sqlive-test-wait "eglot did not start managing the buffer" #'eglot-managed-p)
      (sqlive-test-say "ok: eglot manages %s with %s" (buffer-name)
                       (mapconcat #'identity sqlive-command " "))

      ;; 2. The missing table is flagged, with SQLite's message, on its
      ;; name (character positions of the buffer).
      (sqlive-test-wait "no Flymake diagnostic on `missing'"
                        (lambda () (flymake-diagnostics))
                        (lambda () (format "buffer %s" (buffer-name))))
      (let* ((all (sqlive-test-diagnostics))
             (start (1+ (string-match "missing" first-line)))
             (end (+ start (length "missing"))))
        (pcase all
          (`((,text ,beg ,end* ,type))
           (unless (and (string-suffix-p "no such table: missing" text)
                        (= beg start) (= end* end) (eq type 'eglot-error))
             (sqlive-test-fail
              "expected an error \"no such table: missing\" at %d-%d; got %S" start end all)))
          (_ (sqlive-test-fail "expected one diagnostic; got %S" all)))
        (sqlive-test-say "ok: Flymake shows %S on `missing' (%d-%d)" (caar all) start end))

      ;; 3. Another process creates the table: the diagnostic goes, with no edit.
      (sqlive-test-sqlite3 database "CREATE TABLE missing(x);")
      (sqlive-test-wait "the diagnostic stayed after the sqlite3 shell created the table"
                        (lambda () (null (flymake-diagnostics)))
                        (lambda () (format "%S" (sqlive-test-diagnostics))))
      (sqlive-test-say "ok: the sqlite3 shell creating the table clears it")

      ;; 4. The statement at point, run: its rows, aligned, in *sqlive*.
      (let ((text (sqlive-test-run-statement 2)))
        (sqlive-test-expect-lines text
                                  '("name | score"
                                    "-----+------"
                                    "Ann  |    12"
                                    "Bob  |     3")
                                  "the SELECT's rows")
        (unless (string-match-p "^(2 rows, [0-9.]+ ms)$" text)
          (sqlive-test-fail "no summary line \"(2 rows, N ms)\" in *sqlive*:\n%s" text))
        (sqlive-test-say "ok: sqlive-run-statement shows\n%s" (string-trim-right text)))

      ;; 5. A statement that fails: a user-error with SQLite's message.
      (let ((problem (condition-case err
                         (progn (sqlive-test-run-statement 3) nil)
                       (user-error (error-message-string err))
                       (error (sqlive-test-fail "the failing INSERT signalled %S, not a user-error"
                                                err)))))
        (unless (and problem (string-match-p "UNIQUE constraint failed: players.id" problem))
          (sqlive-test-fail "the failing INSERT gave %S, not SQLite's error as a user-error"
                            problem))
        (sqlive-test-say "ok: a failing statement is a user-error: %s" problem))

      ;; 6. C-g on a statement that never ends stops it in sqlive too:
      ;; the next statement runs at once, not after it.
      (let ((timer (run-with-timer 1 nil (lambda () (setq quit-flag t))))
            (started (float-time)))
        (condition-case err
            (progn (sqlive-test-run-statement 4)
                   (sqlive-test-fail "the endless statement ended"))
          (quit nil)
          (sqlive-test-failure (signal (car err) (cdr err)))
          (error (sqlive-test-fail "C-g on the endless statement signalled %S, not quit" err)))
        (cancel-timer timer)
        (sqlive-test-say "ok: C-g stops waiting for the endless statement (after %.1f s)"
                         (- (float-time) started)))
      (let ((text (sqlive-test-run-statement 2)))
        (sqlive-test-expect-lines text '("Ann  |    12") "the rows after C-g")
        (sqlive-test-say "ok: and sqlive stopped it: the next statement runs"))

      ;; 7. A buffer whose first line names its database: run there, it
      ;; becomes the session's database.
      (sqlive-test-sqlite3 other-database
                           "CREATE TABLE teams(name TEXT); INSERT INTO teams VALUES ('Reds');")
      (sqlive-test-write other (concat "-- sqlive: database=other.sqlite\n"
                                       "SELECT name FROM teams;\n"))
      (find-file other)
      (run-hooks 'post-command-hook)
      (sqlive-test-wait "eglot did not manage the second buffer" #'eglot-managed-p)
      (let ((text (sqlive-test-run-statement 2)))
        (sqlive-test-expect-lines text '("name" "----" "Reds") "the rows of the named database")
        (sqlive-test-say "ok: a buffer naming its database runs there"))

      ;; The end: shut sqlive down as eglot does.  `eglot-shutdown'
      ;; signals when sqlive does not answer `shutdown' (in 1.5 s); then
      ;; it sends `exit', and jsonrpc deletes the process without waiting.
      (let ((server (eglot-current-server)))
        (with-timeout (sqlive-test-timeout
                       (sqlive-test-fail "eglot-shutdown did not finish"))
          (eglot-shutdown server))
        (when (jsonrpc-running-p server)
          (sqlive-test-fail "sqlive still runs after eglot-shutdown"))
        (sqlive-test-say "ok: sqlive answers eglot-shutdown")))))

(condition-case err
    (progn
      (sqlive-test-main)
      (sqlive-test-say "PASS")
      (kill-emacs 0))
  (sqlive-test-failure
   (sqlive-test-say "FAIL: %s\n%s" (cadr err) (sqlive-test-eglot-logs))
   (kill-emacs 1))
  (error
   (sqlive-test-say "FAIL: %s\n%s" (error-message-string err) (sqlive-test-eglot-logs))
   (kill-emacs 1)))

;;; test-eglot.el ends here
