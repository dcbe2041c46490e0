"""What every part shares: jobs and their statuses, the lifecycle's rules, validation,
errors, the request values, and the store SPI (``store``) that backends implement.

Nothing here imports another part of the package; everything else imports from here.
"""
