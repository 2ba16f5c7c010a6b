;;; sqlive-eglot.el --- sqlive as the eglot language server of SQL files  -*- lexical-binding: t; -*-

;; The sqlive authors; MIT licence, as the rest of sqlive's samples.

;;; Commentary:

;; `sqlive --lsp' is a standard Language Server for SQL files: with
;; this file, eglot starts it for `sql-mode' buffers, and Flymake shows
;; SQLite's own diagnostics (updated when any process changes the
;; database's schema), completion-at-point completes tables and columns,
;; and ElDoc shows hovers (a table's columns, a statement's query plan).
;;
;; It adds one command, `sqlive-run-statement': run the statement at
;; point and show its rows as an aligned table in the `*sqlive*' buffer.
;;
;; Works with eglot 1.9 on Emacs 28 (Debian's `elpa-eglot') and with the
;; eglot built into Emacs 29 and later.  In your init file:
;;
;;   (load "/path/to/sqlive/Samples/editors/emacs/sqlive-eglot")
;;   (setq sqlive-command '("/path/to/sqlive" "--lsp"))   ; when not on PATH
;;   (add-hook 'sql-mode-hook #'eglot-ensure)             ; or M-x eglot
;;   (with-eval-after-load 'sql
;;     (define-key sql-mode-map (kbd "C-c C-e") #'sqlive-run-statement))
;;
;; The database a buffer is checked against, first match wins:
;; - the buffer's first line, `-- sqlive: database=PATH' (PATH relative
;;   to the file's directory);
;; - `sqlive-database', sent as the server's `initializationOptions'
;;   when eglot starts it; it may be set in `.dir-locals.el':
;;     ((sql-mode . ((sqlive-database . "games.sqlite"))))
;;   (a relative path is read from the project's root).
;;
;; A database on another machine (docs/remote.md): run sqlive there, over
;; ssh's standard input and output, naming the database by its path there:
;;   (setq sqlive-command '("ssh" "db.example.com" "sqlive" "--lsp" "/srv/app.sqlite"))
;;
;; See Samples/editors/emacs/README.md and docs/protocol.md.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

;; eglot is loaded lazily: by `eglot-ensure', `M-x eglot' or
;; `sqlive-run-statement'.
(defvar eglot-server-programs)
(declare-function eglot-current-server "eglot" ())
(declare-function eglot--TextDocumentPositionParams "eglot" ())
(declare-function eglot--signal-textDocument/didChange "eglot" ())
(declare-function jsonrpc-request "jsonrpc")
(declare-function jsonrpc-notify "jsonrpc")

(defgroup sqlive nil
  "The sqlive language server (a live SQLite playground) for SQL files."
  :group 'languages
  :prefix "sqlive-")

(defcustom sqlive-command '("sqlive" "--lsp")
  "The command that starts sqlive as a language server: program and arguments.
Give the program's absolute path when it is not on the variable
`exec-path'.
A database given here as a last argument is the session's
database unless `sqlive-database' names another."
  :type '(repeat string))

(defcustom sqlive-database nil
  "The database sqlive opens when eglot starts it, or nil for none.
Sent as `initializationOptions.database'.  A relative path is read
from the project's root (eglot's `rootUri'); `~' is expanded.
Read when the server starts, in the buffer that starts it: one
server serves every SQL buffer of a project.  A buffer whose first
line is `-- sqlive: database=PATH' is checked against PATH
instead.  Safe as a directory-local variable."
  :type '(choice (const :tag "None" nil) (file :tag "Database file"))
  :safe (lambda (value) (or (null value) (stringp value))))

(defcustom sqlive-run-timeout 300
  "Seconds `sqlive-run-statement' waits for a statement.
\\[keyboard-quit] stops the statement sooner, in sqlive too."
  :type 'number)

(defcustom sqlive-max-cell-width 60
  "Cells wider than this are cut, with an ellipsis, in `*sqlive*'."
  :type 'integer)

;;;; Starting the server

(defun sqlive-eglot-contact (&optional _interactive _project)
  "The eglot contact of sqlive for the current buffer.
`sqlive-command', with `:initializationOptions' naming
`sqlive-database' when it is set.  Eglot 1.9 calls this with one
argument, later versions with one or two."
  (let ((program (car sqlive-command))
        (database (sqlive--database)))
    (unless (and (stringp program)
                 (or (file-remote-p default-directory) ; eglot runs it there
                     (if (file-name-absolute-p program)
                         (file-executable-p program)
                       (executable-find program))))
      (user-error "sqlive: cannot find `%s'; set `sqlive-command' to sqlive's path"
                  program))
    (append sqlive-command
            (and database
                 (list :initializationOptions (list :database database))))))

(defun sqlive--database ()
  "`sqlive-database' for the server, `~' expanded; nil when unset."
  (when (and (stringp sqlive-database) (not (string-empty-p sqlive-database)))
    (if (string-prefix-p "~" sqlive-database)
        (expand-file-name sqlive-database)
      sqlive-database)))

(with-eval-after-load 'eglot
  ;; First in the list, so that it wins over another SQL server.
  (add-to-list 'eglot-server-programs '(sql-mode . sqlive-eglot-contact)))

;;;; Running a statement

(defvar sqlive--token-counter 0
  "The number of the last progress token `sqlive-run-statement' made.")

(defun sqlive--error-text (data)
  "The message of a `jsonrpc-error' whose data is DATA."
  (cond ((null (alist-get 'jsonrpc-error-code data))
         ;; jsonrpc's own time-out: the statement was stopped.
         (format "no answer in %s s (`sqlive-run-timeout'); the statement was stopped"
                 sqlive-run-timeout))
        ((alist-get 'jsonrpc-error-message data))
        (t (format "%S" data))))

(defun sqlive--request (server method params &optional token)
  "Send METHOD with PARAMS to SERVER and wait for its result.
An error answer signals `jsonrpc-error'.  When no answer comes (a
time-out, or \\[keyboard-quit]), sqlive is told to stop the work of
TOKEN, the `workDoneToken' PARAMS carries."
  (let ((answered nil))
    (unwind-protect
        (condition-case err
            (prog1 (jsonrpc-request server method params :timeout sqlive-run-timeout)
              (setq answered t))
          (jsonrpc-error
           ;; A time-out is a `jsonrpc-error' with no code.
           (setq answered (and (alist-get 'jsonrpc-error-code (cdr err)) t))
           (signal (car err) (cdr err))))
      (when (and token (not answered))
        (ignore-errors
          (jsonrpc-notify server :window/workDoneProgress/cancel (list :token token)))))))

(defun sqlive--declared-database ()
  "The database the buffer's first line names, resolved as sqlive does; or nil.
The line is `-- sqlive: database=PATH', PATH relative to the file's
directory."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (let ((line (string-trim (buffer-substring-no-properties
                                (point) (line-end-position)))))
        (when (string-match
               "\\`--[ \t]*sqlive:[ \t]*database=[ \t]*\\(.*[^ \t]\\)[ \t]*\\'" line)
          (let ((path (match-string 1 line)))
            (cond ((or (string-prefix-p "file:" path) (equal path ":memory:"))
                   path)
                  ((file-name-absolute-p path) ; also ~/...
                   (expand-file-name path))
                  (buffer-file-name
                   (expand-file-name path (file-name-directory buffer-file-name)))
                  (t path))))))))

(defun sqlive--run (server params token)
  "Run `sqlive.run' with PARAMS on SERVER and return its result.
When the buffer's first line names a database that the session
does not have open, open it and run again."
  (let ((request (lambda ()
                   (sqlive--request server :workspace/executeCommand
                                    (list :command "sqlive.run"
                                          :arguments (vector params)
                                          :workDoneToken token)
                                    token))))
    (condition-case err
        (funcall request)
      (jsonrpc-error
       (let ((code (alist-get 'jsonrpc-error-code (cdr err)))
             (declared (sqlive--declared-database)))
         (unless (and (eql code -32010) declared)
           (user-error "sqlive: %s" (sqlive--error-text (cdr err))))
         ;; -32010: no database, or not this document's: open the one
         ;; its first line names, as the session's, and run again.
         (condition-case err
             (sqlive--request server :database/open (list :path declared))
           (jsonrpc-error
            (user-error "sqlive: cannot open %s: %s"
                        declared (sqlive--error-text (cdr err)))))
         (message "sqlive: opened %s, as this buffer's first line names it"
                  (abbreviate-file-name declared))
         (condition-case err
             (funcall request)
           (jsonrpc-error
            (user-error "sqlive: %s" (sqlive--error-text (cdr err))))))))))

;;;###autoload
(defun sqlive-run-statement ()
  "Run the SQL statement at point with sqlive; show its rows in `*sqlive*'.
The buffer must be managed by eglot with sqlive as its server.
The statement runs on the session's database (see `sqlive-database'),
or, when the buffer's first line is `-- sqlive: database=PATH', on
PATH, which becomes the session's database.  \\[keyboard-quit] stops a
long statement."
  (interactive)
  (require 'eglot)
  (let ((server (eglot-current-server)))
    (unless server
      (user-error "sqlive: eglot does not manage this buffer; start it with M-x eglot"))
    ;; Changes not sent yet (eglot waits for idle time) go first, so
    ;; that sqlive finds the statement that is at point now.
    (when (fboundp 'eglot--signal-textDocument/didChange)
      (eglot--signal-textDocument/didChange))
    (let* ((source (current-buffer))
           (where (point-marker))
           (line (line-number-at-pos))
           (position-params (eglot--TextDocumentPositionParams))
           (params (list :uri (plist-get (plist-get position-params :textDocument) :uri)
                         :position (plist-get position-params :position)))
           (token (format "sqlive-run-%d" (cl-incf sqlive--token-counter)))
           (answer (sqlive--run server params token))
           (results (append (plist-get answer :results) nil))
           (first-line (plist-get answer :line)))
      ;; The answer's `line' (when it has one): the statement's first
      ;; line, 0-based; else the line of point.
      (sqlive--show source where (if (integerp first-line) (1+ first-line) line) results)
      (message "sqlive: %s" (sqlive--summary (car (last results)))))))

;;;; The *sqlive* buffer

(defvar-local sqlive--origin nil
  "(BUFFER . MARKER): where the statement `*sqlive*' shows was run.")

(define-derived-mode sqlive-result-mode special-mode "sqlive"
  "The rows of the last statement `sqlive-run-statement' ran.
\\<sqlive-result-mode-map>\\[revert-buffer] runs it again, \\[quit-window] closes the window."
  (setq truncate-lines t)
  (setq-local revert-buffer-function #'sqlive--rerun))

(defun sqlive--rerun (&rest _)
  "Run again the statement that `*sqlive*' shows."
  (pcase-let ((`(,buffer . ,marker) sqlive--origin))
    (unless (and (buffer-live-p buffer) (marker-buffer marker))
      (user-error "sqlive: the statement's buffer is gone"))
    (with-current-buffer buffer
      (save-excursion
        (goto-char marker)
        (sqlive-run-statement)))))

(defun sqlive--show (source where line results)
  "Show RESULTS in `*sqlive*': the statement at WHERE in SOURCE, on LINE."
  (with-current-buffer (get-buffer-create "*sqlive*")
    (unless (derived-mode-p 'sqlive-result-mode)
      (sqlive-result-mode))
    (setq sqlive--origin (cons source where))
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert (propertize (format "-- %s:%d\n" (buffer-name source) line)
                          'face 'font-lock-comment-face))
      (insert (sqlive-format-results results)))
    (goto-char (point-min))
    (display-buffer (current-buffer))))

(defun sqlive--cell (value)
  "VALUE, a value of a result row as JSON decodes it, as a line of text."
  (cond ((null value) (propertize "NULL" 'face 'shadow))
        ((stringp value)
         (let ((text (replace-regexp-in-string
                      "\t" " " (replace-regexp-in-string "\r?\n" "↵" value))))
           (if (> (string-width text) sqlive-max-cell-width)
               (truncate-string-to-width text sqlive-max-cell-width nil nil "…")
             text)))
        ((numberp value) (format "%s" value))
        ((and (consp value) (plist-member value :$blob))
         (let* ((base64 (or (plist-get value :$blob) ""))
                (bytes (condition-case nil
                           (length (base64-decode-string base64))
                         (error (/ (* 3 (length base64)) 4)))))
           (propertize (format "<blob %d bytes>" bytes) 'face 'shadow)))
        (t (format "%S" value))))

(defun sqlive--pad (text width right)
  "TEXT padded with spaces to WIDTH columns, on the left when RIGHT."
  (let ((gap (max 0 (- width (string-width text)))))
    (if right
        (concat (make-string gap ?\s) text)
      (concat text (make-string gap ?\s)))))

(defun sqlive-format-table (columns rows)
  "COLUMNS (names) and ROWS (lists or vectors of values) as an aligned table.
A header, a rule, a line per row; numeric columns right-aligned."
  (let* ((columns (append columns nil))
         (rows (mapcar (lambda (row) (append row nil)) (append rows nil)))
         (widths (mapcar #'string-width columns))
         (numeric (mapcar (lambda (_) (and rows t)) columns))
         (cells
          (mapcar (lambda (row)
                    (cl-loop for value in row
                             for index from 0
                             for text = (sqlive--cell value)
                             do (setf (nth index widths)
                                      (max (nth index widths) (string-width text)))
                             unless (or (null value) (numberp value))
                             do (setf (nth index numeric) nil)
                             collect text))
                  rows))
         (line (lambda (texts)
                 (string-trim-right
                  (mapconcat #'identity
                             (cl-mapcar #'sqlive--pad texts widths numeric)
                             " | ")))))
    (concat
     (propertize (funcall line columns) 'face 'bold) "\n"
     (mapconcat (lambda (width) (make-string width ?-)) widths "-+-") "\n"
     (mapconcat (lambda (row) (concat (funcall line row) "\n")) cells ""))))

(defun sqlive--summary (result)
  "The summary line of RESULT: how many rows, how long."
  (if (null result)
      "no statement"
    (let ((columns (plist-get result :columns))
          (elapsed (plist-get result :elapsedMs)))
      (concat
       (if (> (length columns) 0)
           (let ((count (length (plist-get result :rows))))
             (concat (format "%d row%s" count (if (= count 1) "" "s"))
                     (if (eq (plist-get result :truncated) t) ", truncated" "")))
         (let ((changes (or (plist-get result :changes) 0)))
           (format "%d row%s changed" changes (if (= changes 1) "" "s"))))
       (if (numberp elapsed) (format ", %.1f ms" elapsed) "")))))

(defun sqlive-format-results (results)
  "Return the text that `*sqlive*' shows for RESULTS.
RESULTS is the `results' of `sqlive.run': for each, the statement,
its rows as a table and a summary line."
  (if (null results)
      "(no statement)\n"
    (mapconcat
     (lambda (result)
       (let ((sql (string-trim (or (plist-get result :sql) "")))
             (columns (plist-get result :columns)))
         (concat
          (if (string-empty-p sql) ""
            (propertize (concat sql "\n\n") 'face 'font-lock-string-face))
          (if (> (length columns) 0)
              (sqlive-format-table columns (plist-get result :rows))
            "")
          "(" (sqlive--summary result) ")\n")))
     results "\n")))

(provide 'sqlive-eglot)
;;; sqlive-eglot.el ends here
