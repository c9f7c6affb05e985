;;; gpulens.el --- gpulens language server with eglot  -*- lexical-binding: t; -*-

;; Load this file (or copy the form below into your init file) to start
;; `gpulens serve' for Python buffers with eglot, Emacs's built-in LSP client
;; (Emacs 29+).  Settings go to the server as initializationOptions.

;;; Code:

(require 'eglot)

(defgroup gpulens nil
  "GPU acceleration advice for Python, from the gpulens language server."
  :group 'tools)

(defcustom gpulens-command '("gpulens" "serve")
  "Command that starts the gpulens language server."
  :type '(repeat string))

(defcustom gpulens-target-gpu nil
  "GPU to tune the advice to, such as \"H200\" or \"RTX 4090\"; nil for the attached one."
  :type '(choice (const nil) string))

(add-to-list 'eglot-server-programs
             `((python-mode python-ts-mode)
               . (,@gpulens-command
                  :initializationOptions
                  (:targetGpu ,gpulens-target-gpu :inlayHints t))))

(provide 'gpulens)
;;; gpulens.el ends here
