"""Page furniture's words in the web's most common languages, by what the furniture is.

Written down by hand from the labels news, shop and blog templates print on their boxes
("Related stories", "Ähnliche Artikel", "Notas relacionadas", "Articles similaires",
"Похожие новости", "関連記事"…), never fitted to a page or a fold. A word that is ordinary text in
its own or another language is left out (German "über" and "vor", Spanish "hace", the "est" of
EST, which is French for "is"). Lower case; a CJK entry (Japanese, Chinese, Korean)
is matched inside a token, since those languages do not separate words by spaces.

:data:`VOCABULARIES` joins the languages: the vocabulary features of :mod:`noisecbr.features`
count a word in any of them, so a page's language need not be known to see "Teilen" as a
share button.
"""

from __future__ import annotations

import re

#: Per vocabulary and language, the words (whitespace-separated).
FURNITURE: dict[str, dict[str, str]] = {
    "related": {
        "en": "related recommended popular trending more also latest recent top watch "
              "suggested",
        "de": "ähnliche ähnlicher verwandte weitere mehr empfohlen empfehlungen beliebt "
              "meistgelesen meistgelesene neueste lesen auch interessieren",
        "es": "relacionadas relacionados relacionada relacionado recomendados recomendadas "
              "populares tendencias más leídas leídos últimas noticias también",
        "fr": "similaires associés recommandés recommandé populaires tendances plus lus "
              "dernières derniers actualités aussi lire",
        "it": "correlati correlate consigliati popolari tendenze più letti lette ultime notizie "
              "anche leggi",
        "pt": "relacionadas relacionados recomendados populares tendências mais lidas lidos "
              "últimas notícias também leia",
        "nl": "gerelateerd gerelateerde aanbevolen populair populaire meest gelezen laatste "
              "nieuws ook lees",
        "ru": "похожие похожее связанные рекомендуем рекомендуемые популярные читайте также "
              "последние новости самое",
        "pl": "powiązane podobne polecane popularne najpopularniejsze najnowsze czytaj także "
              "również",
        "tr": "ilgili benzer önerilen popüler gündem çok okunan okunanlar son haberler",
        "sv": "relaterade liknande rekommenderade populära mest lästa senaste nyheter läs också",
        "cs": "související podobné doporučujeme populární nejčtenější nejnovější čtěte také",
        "ja": "関連記事 関連 おすすめ 人気 ランキング 最新 注目",
        "zh": "相关 推荐 热门 热点 排行 最新 猜你喜欢 延伸阅读",
        "ko": "관련 추천 인기 많이 최신",
    },
    "social": {
        "en": "share facebook twitter linkedin pinterest whatsapp email print follow instagram "
              "youtube tiktok reddit telegram tweet",
        "de": "teilen drucken folgen versenden twittern",
        "es": "compartir imprimir seguir síguenos enviar",
        "fr": "partager imprimer suivre suivez envoyer",
        "it": "condividi stampa segui seguici invia",
        "pt": "compartilhar partilhar imprimir siga seguir enviar",
        "nl": "delen afdrukken volg volgen",
        "ru": "поделиться печать подписывайтесь отправить",
        "pl": "udostępnij drukuj obserwuj",
        "tr": "paylaş yazdır takip",
        "sv": "dela skriv följ",
        "cs": "sdílet tisk sledujte",
        "ja": "シェア 共有 ツイート 印刷",
        "zh": "分享 转发 打印 关注",
        "ko": "공유 인쇄",
    },
    "comment": {
        "en": "comment comments reply replies replied ago likes like",
        "de": "kommentar kommentare kommentieren antworten antwort",
        "es": "comentario comentarios responder respuesta respuestas",
        "fr": "commentaire commentaires répondre réponse réponses",
        "it": "commento commenti rispondi risposta risposte",
        "pt": "comentário comentários responder resposta respostas",
        "nl": "reactie reacties reageer reageren",
        "ru": "комментарий комментарии ответить ответ",
        "pl": "komentarz komentarze odpowiedz odpowiedź",
        "tr": "yorum yorumlar yanıtla cevapla",
        "sv": "kommentar kommentarer svara",
        "cs": "komentář komentáře odpovědět",
        "ja": "コメント 返信",
        "zh": "评论 留言 回复 跟帖",
        "ko": "댓글 답글",
    },
    "subscribe": {
        "en": "subscribe newsletter sign signup login log register account join download app "
              "donate support",
        "de": "abonnieren abo newsletter anmelden registrieren konto einloggen abonnement "
              "herunterladen spenden unterstützen",
        "es": "suscríbete suscribirse suscripción boletín registrarse regístrate iniciar sesión "
              "cuenta descargar donar apoya",
        "fr": "abonnez abonner abonnement inscrivez inscription connexion connecter compte "
              "télécharger soutenez don",
        "it": "iscriviti abbonati abbonamento registrati accedi account scarica sostieni dona",
        "pt": "assine assinar assinatura inscreva cadastre entrar conta baixe apoie doe",
        "nl": "abonneer abonnement aanmelden inloggen registreren account download steun doneer",
        "ru": "подписаться подписка рассылка войти регистрация аккаунт скачать поддержать",
        "pl": "subskrybuj subskrypcja prenumerata zaloguj zarejestruj konto pobierz wesprzyj",
        "tr": "abone bülten giriş kayıt hesap indir destek",
        "sv": "prenumerera nyhetsbrev logga registrera konto ladda stöd",
        "cs": "odebírat předplatné přihlásit registrovat účet stáhnout podpořte",
        "ja": "購読 登録 ログイン ニュースレター 会員",
        "zh": "订阅 登录 注册 下载 会员",
        "ko": "구독 로그인 회원가입 다운로드",
    },
    "legal": {
        "en": "copyright rights reserved privacy policy terms cookies cookie consent accept "
              "conditions",
        "de": "datenschutz impressum rechte vorbehalten nutzungsbedingungen akzeptieren "
              "einwilligung agb",
        "es": "derechos reservados privacidad política términos condiciones aceptar aviso legal",
        "fr": "droits réservés confidentialité politique conditions accepter mentions légales",
        "it": "diritti riservati privacy informativa termini condizioni accetta",
        "pt": "direitos reservados privacidade política termos condições aceitar",
        "nl": "rechten voorbehouden privacybeleid voorwaarden accepteren",
        "ru": "права защищены конфиденциальности политика условия согласие принять",
        "pl": "prawa zastrzeżone prywatności polityka regulamin akceptuję",
        "tr": "hakları saklıdır gizlilik politikası şartlar koşullar kabul çerez",
        "sv": "rättigheter förbehållna integritetspolicy villkor acceptera kakor",
        "cs": "práva vyhrazena ochrana soukromí podmínky souhlasím",
        "ja": "著作権 プライバシー 利用規約",
        "zh": "版权 隐私 条款 免责声明",
        "ko": "저작권 개인정보 약관",
    },
    "nav": {
        "en": "home menu search skip contact about help faq sitemap careers",
        "de": "startseite suche suchen kontakt hilfe karriere",
        "es": "inicio buscar búsqueda contacto ayuda acerca empleo",
        "fr": "accueil rechercher recherche contact aide propos carrières",
        "it": "ricerca cerca contatti aiuto chi siamo lavora",
        "pt": "início pesquisar busca contato contacto ajuda sobre",
        "nl": "zoeken contact over vacatures",
        "ru": "главная меню поиск контакты помощь о нас",
        "pl": "strona główna szukaj kontakt pomoc",
        "tr": "anasayfa ara arama iletişim yardım hakkımızda",
        "sv": "hem sök kontakt hjälp om",
        "cs": "úvod hledat kontakt nápověda",
        "ja": "ホーム メニュー 検索 お問い合わせ",
        "zh": "首页 菜单 搜索 联系 帮助 导航",
        "ko": "홈 메뉴 검색 문의",
    },
    "ad": {
        "en": "advertisement sponsored ad ads promoted partner",
        "de": "anzeige werbung gesponsert",
        "es": "publicidad patrocinado anuncio",
        "fr": "publicité sponsorisé annonce",
        "it": "pubblicità sponsorizzato annuncio",
        "pt": "publicidade patrocinado anúncio",
        "nl": "advertentie gesponsord",
        "ru": "реклама",
        "pl": "reklama sponsorowane",
        "tr": "reklam sponsorlu",
        "sv": "annons sponsrad",
        "cs": "reklama",
        "ja": "広告 スポンサー",
        "zh": "广告 赞助",
        "ko": "광고",
    },
    "shop": {
        "en": "cart price add buy shop shipping checkout sale reviews rating stars",
        "de": "warenkorb preis kaufen versand kasse angebot bewertungen",
        "es": "carrito precio comprar envío tienda oferta valoraciones",
        "fr": "panier prix acheter livraison boutique promo avis",
        "it": "carrello prezzo acquista spedizione negozio offerta recensioni",
        "pt": "carrinho preço comprar frete loja oferta avaliações",
        "nl": "winkelwagen prijs kopen verzending winkel aanbieding beoordelingen",
        "ru": "корзина цена купить доставка магазин отзывы",
        "pl": "koszyk cena kup dostawa sklep opinie",
        "tr": "sepet fiyat satın kargo mağaza yorumlar",
        "sv": "varukorg pris köp frakt butik recensioner",
        "cs": "košík cena koupit doprava obchod recenze",
        "ja": "カート 価格 購入 送料",
        "zh": "购物车 价格 购买 包邮",
        "ko": "장바구니 가격 구매 배송",
    },
    "readmore": {
        "en": "read continue next previous prev page back",
        "de": "weiterlesen weiter zurück nächste nächster vorherige vorheriger seite",
        "es": "leer seguir siguiente anterior página",
        "fr": "suite suivant suivante précédent précédente page",
        "it": "continua successivo precedente pagina",
        "pt": "continuar próximo próxima anterior página",
        "nl": "verder volgende vorige pagina",
        "ru": "далее следующая предыдущая страница читать",
        "pl": "dalej następny poprzedni strona",
        "tr": "devamı sonraki önceki sayfa",
        "sv": "fortsätt nästa föregående sida",
        "cs": "další předchozí strana",
        "ja": "続きを読む 次へ 前へ",
        "zh": "阅读全文 下一页 上一页 下一篇 上一篇",
        "ko": "다음 이전",
    },
    # Datelines and update lines: "Updated 0339 GMT", "Published 18 November 2019", "vor 3
    # Stunden", "Actualizado".
    "dateline": {
        "en": "published updated posted gmt utc edt pst bst ago minutes hours mins hrs "
              "january february march april may june july august september october november "
              "december jan feb mar apr jun jul aug sep sept oct nov dec",
        "de": "veröffentlicht aktualisiert minuten stunden uhr januar februar märz "
              "april mai juni juli august september oktober november dezember",
        "es": "publicado actualizado minutos horas enero febrero marzo abril mayo junio "
              "julio agosto septiembre octubre noviembre diciembre",
        "fr": "publié minutes heures janvier février mars avril mai juin juillet "
              "août septembre octobre novembre décembre",
        "it": "pubblicato aggiornato minuti ore gennaio febbraio marzo aprile maggio giugno "
              "luglio agosto settembre ottobre novembre dicembre",
        "pt": "publicado atualizado minutos horas janeiro fevereiro março abril maio junho "
              "julho agosto setembro outubro novembro dezembro",
        "nl": "gepubliceerd bijgewerkt geleden minuten uur januari februari maart april mei "
              "juni juli augustus september oktober november december",
        "ru": "опубликовано обновлено минут часов января февраля марта апреля мая июня "
              "июля августа сентября октября ноября декабря",
        "pl": "opublikowano aktualizacja temu minut godzin stycznia lutego marca kwietnia maja "
              "czerwca lipca sierpnia września października listopada grudnia",
        "tr": "yayınlanma güncelleme dakika saat ocak şubat mart nisan mayıs haziran "
              "temmuz ağustos eylül ekim kasım aralık",
        "sv": "publicerad uppdaterad minuter timmar januari februari mars april maj juni "
              "juli augusti september oktober november december",
        "cs": "publikováno aktualizováno minutami hodinami ledna února března dubna "
              "května června července srpna září října listopadu prosince",
        "ja": "公開 更新 投稿日",
        "zh": "发布 更新 发表于 来源",
        "ko": "입력 수정 발행",
    },
    # Captions and credits: "Foto: …", "Image via Getty Images", "…Credit: EPA".
    "credit": {
        "en": "photo photos image images credit credits via getty reuters afp ap epa istock "
              "shutterstock caption",
        "de": "foto fotos bild bilder quelle bildquelle dpa",
        "es": "foto fotos imagen imágenes fuente crédito efe",
        "fr": "photo photos image crédit source",
        "it": "foto immagine fonte ansa",
        "pt": "foto fotos imagem crédito fonte lusa",
        "nl": "foto beeld bron anp",
        "ru": "фото фотография источник тасс риа",
        "pl": "zdjęcie fot źródło pap",
        "tr": "fotoğraf görsel kaynak aa",
        "sv": "foto bild källa tt",
        "cs": "foto snímek zdroj čtk",
        "ja": "写真 画像 提供",
        "zh": "图片 图 摄影 来源",
        "ko": "사진 출처",
    },
}


#: Scripts without spaces between words: their furniture words are found inside tokens.
UNSPACED_SCRIPT = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _vocabularies() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Per vocabulary, its whole words and its words of unspaced scripts (all languages)."""
    whole: dict[str, tuple[str, ...]] = {}
    inside: dict[str, tuple[str, ...]] = {}
    for name, languages in FURNITURE.items():
        words = list(dict.fromkeys(w for text in languages.values() for w in text.split()))
        whole[name] = tuple(w for w in words if not UNSPACED_SCRIPT.search(w))
        inside[name] = tuple(w for w in words if UNSPACED_SCRIPT.search(w))
    return whole, inside


#: Per vocabulary, its words (lower case, every language): a token is the word.
#: :data:`UNSPACED_VOCABULARIES`: the words of Japanese, Chinese and Korean, found in a token.
VOCABULARIES, UNSPACED_VOCABULARIES = _vocabularies()
