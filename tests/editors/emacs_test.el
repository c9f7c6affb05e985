;;; emacs_test.el --- editors/emacs/gpulens.el in Emacs with eglot, in batch  -*- lexical-binding: t; -*-

;; Run by `tests/editors/run emacs': loads gpulens.el the way editors/README.md
;; says, opens a copy of an example, waits for gpulens diagnostics (flymake),
;; applies "Disable CODE for this line", saves, and checks that the target GPU
;; set before loading reached the server.  tests/editors/run checks the saved
;; file.  Environment: GPULENS_BIN, GPULENS_EL, GPULENS_TEST_FILE.

(require 'package)
(package-initialize)

(defun gpulens-test-fail (format-string &rest args)
  (let ((events (ignore-errors (eglot-events-buffer (eglot-current-server)))))
    (message "emacs %s: FAILED: %s" emacs-version (apply #'format format-string args))
    (when (buffer-live-p events)
      (with-current-buffer events
        (message "--- eglot events (end)\n%s"
                 (buffer-substring-no-properties (max (point-min) (- (point-max) 4000)) (point-max))))))
  (kill-emacs 3))

(defun gpulens-test-wait (what predicate)
  (let ((deadline (+ (float-time) 20)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    (or value (gpulens-test-fail "timed out waiting for %s" what))))

(condition-case err
    (progn
      ;; As editors/README.md says: settings first, then load the file.
      (setq gpulens-command (list (getenv "GPULENS_BIN") "serve"))
      (setq gpulens-target-gpu "H200")
      (load (getenv "GPULENS_EL") nil t)
      (find-file (getenv "GPULENS_TEST_FILE"))
      ;; `eglot-ensure' waits for the command loop, which batch mode lacks.
      (apply #'eglot (eglot--guess-contact))
      (gpulens-test-wait "eglot to connect" #'eglot-current-server)
      (let* ((diagnostics
              (gpulens-test-wait "gpulens diagnostics"
                                 (lambda ()
                                   (seq-filter (lambda (d) (string-prefix-p "gpulens" (flymake-diagnostic-text d)))
                                               (flymake-diagnostics)))))
             (target (or (seq-find (lambda (d) (string-match-p "\\[CUML002\\]" (flymake-diagnostic-text d))) diagnostics)
                         (gpulens-test-fail "no CUML002 among %d diagnostics" (length diagnostics))))
             (beg (flymake-diagnostic-beg target))
             (line (line-number-at-pos beg))
             (actions (eglot-code-actions beg (flymake-diagnostic-end target) "quickfix"))
             (disable (or (seq-find (lambda (a) (equal (plist-get a :title) "Disable CUML002 for this line")) actions)
                          (gpulens-test-fail "no \"Disable CUML002 for this line\" among %S"
                                             (mapcar (lambda (a) (plist-get a :title)) actions)))))
        (message "emacs %s: %d gpulens diagnostics; applying %S on line %d"
                 emacs-version (length diagnostics) (plist-get disable :title) line)
        (eglot--apply-workspace-edit (plist-get disable :edit))
        (save-buffer)
        (let* ((report (jsonrpc-request (eglot-current-server) :workspace/executeCommand
                                        '(:command "gpulens.gpuProfile" :arguments [])))
               (profile (plist-get report :profile)))
          (message "emacs %s: GPU profile %S" emacs-version profile)
          (unless (equal (plist-get profile :source) "target")
            (gpulens-test-fail "gpulens-target-gpu did not reach the server: %S" report))))
      (kill-emacs 0))
  (error (gpulens-test-fail "%S" err)))
